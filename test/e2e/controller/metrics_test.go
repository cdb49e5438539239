package controller_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metricsToken is a ServiceAccount token allowed to read /metrics, as a
// Prometheus in the cluster would hold.
func (e *env) metricsToken() string {
	e.t.Helper()
	name := "scraper-" + e.ns
	if _, err := e.cs.CoreV1().ServiceAccounts(e.ns).Create(e.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "scraper"}}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	if _, err := e.cs.RbacV1().ClusterRoles().Create(e.ctx, cr, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "scraper", Namespace: e.ns}}}
	if _, err := e.cs.RbacV1().ClusterRoleBindings().Create(e.ctx, crb, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = e.cs.RbacV1().ClusterRoleBindings().Delete(e.ctx, name, metav1.DeleteOptions{})
		_ = e.cs.RbacV1().ClusterRoles().Delete(e.ctx, name, metav1.DeleteOptions{})
	})
	tr, err := e.cs.CoreV1().ServiceAccounts(e.ns).CreateToken(e.ctx, "scraper", &authv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return tr.Status.Token
}

// samples are a scrape's values by series, "name{label="v",...}" with
// labels in the order the exposition format prints them (sorted).
type samples map[string]float64

func (s samples) value(series string) float64 { return s[series] }

// scrape reads the controller's /metrics over HTTPS with a bearer token.
// The certificate is the controller's self-signed one: the test checks
// that TLS is served, not who signed it.
func (e *env) scrape(p *controllerProc, token string) samples {
	e.t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // #nosec: self-signed test endpoint
	var lastErr error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		req, _ := http.NewRequestWithContext(e.ctx, http.MethodGet, "https://"+p.metricsAddr+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			lastErr = err
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			lastErr = fmt.Errorf("%s: %s", resp.Status, body)
			continue
		}
		return parseSamples(string(body))
	}
	e.t.Fatalf("scrape https://%s/metrics: %v", p.metricsAddr, lastErr)
	return nil
}

func parseSamples(text string) samples {
	out := samples{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}
