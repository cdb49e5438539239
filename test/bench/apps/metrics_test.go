//go:build bench

package apps

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"sort"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The controller's own account of its reconciles: controller-runtime's
// histograms on its /metrics endpoint (HTTPS on 127.0.0.1, for a caller
// allowed get on /metrics), read before and after the progress, so the
// difference is the progress's alone.

// metricsToken is a token of a ServiceAccount of ns allowed to read
// /metrics (the chart's metrics-reader role, made here).
func metricsToken(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) string {
	t.Helper()
	const name = "apps-bench-metrics-reader"
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + ns},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{}) })
	rb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), rb.Name, metav1.DeleteOptions{})
	})
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// histogram is a histogram's cumulative bucket counts by upper bound.
type histogram map[float64]uint64

// scrape reads the named histogram, labelled label=value, from the
// controller's /metrics (its self-signed certificate is not checked: the
// address is the test's own 127.0.0.1 port).
func scrape(t *testing.T, addr, token, name, label, value string) histogram {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a local test endpoint
	var fams map[string]*dto.MetricFamily
	deadline := time.Now().Add(time.Minute)
	for {
		req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				var p expfmt.TextParser
				if fams, err = p.TextToMetricFamilies(bytes.NewReader(b)); err != nil {
					t.Fatal(err)
				}
				break
			}
			err = fmt.Errorf("%s: %.200s", resp.Status, b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET https://%s/metrics: %v", addr, err)
		}
		time.Sleep(time.Second)
	}
	h := histogram{}
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == value {
				for _, b := range m.GetHistogram().GetBucket() {
					h[b.GetUpperBound()] += b.GetCumulativeCount()
				}
			}
		}
	}
	return h
}

// quantile is the upper bound of the bucket the q-quantile of the
// observations between before and after falls in, and their count.
func quantile(before, after histogram, q float64) (float64, uint64) {
	bounds := make([]float64, 0, len(after))
	for b := range after {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 {
		return 0, 0
	}
	total := after[bounds[len(bounds)-1]] - before[bounds[len(bounds)-1]]
	for _, b := range bounds {
		if float64(after[b]-before[b]) >= q*float64(total) {
			return b, total
		}
	}
	return bounds[len(bounds)-1], total
}
