package localcluster

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "embed"
)

//go:embed kwok.yaml
var kwokTemplate string

// brokenQuery and failQuery select pods by image tag (the part after the
// last ':' of the last path element, digest removed), for kwok's selectors.
const (
	brokenQuery = `.spec.containers.[].image | split("/") | last | split("@") | first | split(":") | (.[1] // "") | contains("broken")`
	failQuery   = `.spec.containers.[].image | split("/") | last | split("@") | first | split(":") | (.[1] // "") | contains("fail")`
)

// brokenRestartInterval is how often a broken container "restarts".
const brokenRestartInterval = time.Second

// auditPolicy records every request at Metadata level, except the control
// plane's own chatter (controllers, scheduler, kwok), so the log shows what
// clients such as Upshift did. Of the controllers it keeps one thing: their
// status updates of workloads, Jobs and CRDs, which say when a rollout was
// done (the benchmark measures how soon a client reacts to them).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["update", "patch"]
  resources:
  - {group: apps, resources: ["deployments/status", "daemonsets/status", "statefulsets/status"]}
  - {group: batch, resources: ["jobs/status"]}
  - {group: apiextensions.k8s.io, resources: ["customresourcedefinitions/status"]}
- level: None
  users: ["system:kube-controller-manager", "system:kube-scheduler", "upshift-kwok", "system:apiserver"]
- level: None
  userGroups: ["system:serviceaccounts:kube-system", "system:nodes"]
- level: Metadata
`

// auditPolicyWithBodiesOf is auditPolicy with, first, a rule recording the
// writes of the given users at Request level (their bodies).
func auditPolicyWithBodiesOf(users []string) string {
	if len(users) == 0 {
		return auditPolicy
	}
	quoted := make([]string, len(users))
	for i, u := range users {
		quoted[i] = strconv.Quote(u) // a JSON string is a YAML flow scalar
	}
	rule := "- level: Request\n  users: [" + strings.Join(quoted, ", ") + "]\n  verbs: [\"create\", \"update\", \"patch\", \"delete\", \"deletecollection\"]\n"
	head, rest, _ := strings.Cut(auditPolicy, "rules:\n")
	return head + "rules:\n" + rule + rest
}

// layout names the files of one cluster directory.
type layout struct{ dir string }

func (l layout) path(parts ...string) string {
	return filepath.Join(append([]string{l.dir}, parts...)...)
}
func (l layout) pki(name string) string      { return l.path("pki", name) }
func (l layout) log(component string) string { return l.path("logs", component+".log") }
func (l layout) kubeconfig() string          { return l.path("kubeconfig") }
func (l layout) componentKubeconfig(c string) string {
	return l.path("kubeconfigs", c+".kubeconfig")
}
func (l layout) auditLog() string { return l.path("logs", "audit.log") }

// writeClusterFiles creates the directory tree, certificates, keys,
// kubeconfigs, audit policy and kwok configuration.
func writeClusterFiles(l layout, name string, ports Ports, podReadyDelay time.Duration, auditBodiesOf []string) (*certAuthority, error) {
	for _, d := range []string{"pki", "logs", "kubeconfigs", "etcd", "users"} {
		if err := os.MkdirAll(l.path(d), 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", l.path(d), err)
		}
	}
	ca, err := newCA("upshift-local-" + name)
	if err != nil {
		return nil, err
	}
	if err := ca.write(l.path("pki")); err != nil {
		return nil, err
	}
	if err := writeKeyPairs(l, ca); err != nil {
		return nil, err
	}
	if err := writeKubeconfigs(l, name, ports, ca); err != nil {
		return nil, err
	}
	if err := os.WriteFile(l.path("audit-policy.yaml"), []byte(auditPolicyWithBodiesOf(auditBodiesOf)), 0o644); err != nil {
		return nil, err
	}
	fakeLog := l.path("container.log")
	line := time.Now().UTC().Format(time.RFC3339Nano) + " stdout F upshift local cluster: this container runs on a kwok fake node; it has no real output\n"
	if err := os.WriteFile(fakeLog, []byte(line), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(l.path("kwok.yaml"), []byte(kwokConfig(podReadyDelay, fakeLog)), 0o644); err != nil {
		return nil, err
	}
	return ca, nil
}

// writeKeyPairs writes the serving certificates of the API server, etcd
// and kwok, the API server's client certificates, and the
// ServiceAccount signing key, all signed by ca.
func writeKeyPairs(l layout, ca *certAuthority) error {
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	serving := map[string][]string{
		"apiserver": {"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		"etcd":      {"localhost"},
		"kwok":      {"localhost"},
	}
	for svc, names := range serving {
		ips := loopback
		if svc == "apiserver" {
			ips = append(ips, net.ParseIP("10.96.0.1")) // first service IP: the in-cluster kubernetes Service
		}
		kp, err := ca.serving(svc, names, ips)
		if err != nil {
			return err
		}
		if err := writeKeyPair(l.path("pki"), svc, kp); err != nil {
			return err
		}
	}
	clients := []struct {
		file, user string
		groups     []string
	}{
		{"apiserver-etcd-client", "kube-apiserver", nil},
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}},
	}
	for _, c := range clients {
		kp, err := ca.client(c.user, c.groups)
		if err != nil {
			return err
		}
		if err := writeKeyPair(l.path("pki"), c.file, kp); err != nil {
			return err
		}
	}
	saPriv, saPub, err := newServiceAccountKey()
	if err != nil {
		return err
	}
	if err := os.WriteFile(l.pki("sa.key"), saPriv, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(l.pki("sa.pub"), saPub, 0o644); err != nil {
		return err
	}
	return nil
}

// writeKubeconfigs writes the admin's kubeconfig and those of the
// components, each with a client certificate of its own.
func writeKubeconfigs(l layout, name string, ports Ports, ca *certAuthority) error {
	server := serverURL(ports)
	kubeconfigs := []struct {
		path, user string
		groups     []string
	}{
		{l.kubeconfig(), AdminUser, []string{"system:masters"}},
		{l.componentKubeconfig("controller-manager"), "system:kube-controller-manager", nil},
		{l.componentKubeconfig("scheduler"), "system:kube-scheduler", nil},
		// kwok writes node and pod status for every fake node; it is test
		// infrastructure standing in for kubelets, so it runs as admin.
		{l.componentKubeconfig("kwok"), "upshift-kwok", []string{"system:masters"}},
	}
	for _, k := range kubeconfigs {
		kp, err := ca.client(k.user, k.groups)
		if err != nil {
			return err
		}
		if err := writeKubeconfig(k.path, "upshift-"+name, server, ca.certPEM, k.user, kp); err != nil {
			return err
		}
	}
	return nil
}

// kwokConfig fills the embedded kwok configuration's placeholders.
func kwokConfig(podReadyDelay time.Duration, logsFile string) string {
	r := strings.NewReplacer(
		"__POD_READY_DELAY_MS__", strconv.FormatInt(podReadyDelay.Milliseconds(), 10),
		"__BROKEN_DELAY_MS__", strconv.FormatInt(brokenRestartInterval.Milliseconds(), 10),
		"__BROKEN_QUERY__", brokenQuery,
		"__FAIL_QUERY__", failQuery,
		"__LOGS_FILE__", logsFile,
	)
	return r.Replace(kwokTemplate)
}

func serverURL(p Ports) string { return "https://127.0.0.1:" + strconv.Itoa(p.APIServer) }
