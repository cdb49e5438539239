package server_test

import (
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// webCatalog is a small platform's release catalog: a controller
// Deployment whose image tag is the version and a ConfigMap that says
// the version (what spec.detect reads). Its values choose the platform's
// namespace (each test its own), a release whose image crash-loops (the
// local kubelet crash-loops a tag with "broken" in it), whether each hop
// waits for an approval before it records its version, whether a
// failed hop rolls back by itself (autoRollback "false": it stops, failed,
// for an operator to roll back or retry), and a maintenance window's
// schedule (window: a cron line, 10 minutes long, UTC).
const webCatalog = `apiVersion: upshift.dev/v1alpha1
kind: ReleaseCatalog
metadata: {name: web}
spec:
  detect:
  - configMap: {namespace: NS, name: web-version, key: version}
  planTemplate: plan.yaml.tmpl
  values: {broken: "", approve: "false", autoRollback: "true", window: ""}
  releases:
  - {version: 1.0.0}
  - {version: 1.1.0}
  - {version: 1.2.0}
`

const webTemplate = `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata:
  name: NS-{{ .Version }}
spec:
  version: "{{ .Version }}"
  autoRollback: {{ .Values.autoRollback }}
{{- if .Values.window }}
  windows:
  - {schedule: "{{ .Values.window }}", duration: 10m}
{{- end }}
  stages:
  - name: controller
    steps:
    - name: controller
      manifests:
        inline: |
          apiVersion: apps/v1
          kind: Deployment
          metadata: {name: web-controller, namespace: NS}
          spec:
            replicas: 1
            selector: {matchLabels: {app: web-controller}}
            template:
              metadata: {labels: {app: web-controller}}
              spec:
                containers:
                - name: controller
                  image: example.com/web/controller:{{ .Tag }}{{ if eq .Version .Values.broken }}-broken{{ end }}
    gates:
    - ready: {apiVersion: apps/v1, kind: Deployment, namespace: NS, name: web-controller}
{{- if eq .Values.approve "true" }}
  - name: go-ahead
    steps:
    - name: go-ahead
      approval: {message: "the controller runs {{ .Version }}: approve to record it"}
{{- end }}
  - name: version
    steps:
    - name: version
      manifests:
        inline: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: web-version, namespace: NS}
          data: {version: "{{ .Version }}"}
`

// appPlan is the app phase's plan: a ConfigMap, with checks of every
// severity (a warning one that fails: its Deployment does not exist).
const appPlan = `apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata:
  name: NS-app
spec:
  version: "2.0.0"
  checks:
  - nodesReady: {}
  - ready: {apiVersion: apps/v1, kind: Deployment, namespace: NS, name: not-there}
    severity: warning
    timeout: 2s
  stages:
  - name: app
    steps:
    - name: config
      manifests:
        inline: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: web-app, namespace: NS}
          data: {version: "2.0.0"}
`

// platform installs version 1.0.0 of the web platform in a namespace of
// its own and writes its catalog and app plan; it returns the namespace
// and the catalog's and app plan's paths.
func (e *env) platform() (ns, catalog, app string) {
	e.t.Helper()
	ns = "web-" + e.runsNS[len("runs-"):]
	if len(ns) > 40 {
		ns = ns[:40]
	}
	ns = strings.TrimRight(ns, "-")
	dir := e.t.TempDir()
	write(e.t, filepath.Join(dir, "catalog.yaml"), strings.ReplaceAll(webCatalog, "NS", ns))
	write(e.t, filepath.Join(dir, "plan.yaml.tmpl"), strings.ReplaceAll(webTemplate, "NS", ns))
	app = filepath.Join(dir, "app.yaml")
	write(e.t, app, strings.ReplaceAll(appPlan, "NS", ns))
	if _, err := e.cs.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.cs.CoreV1().ConfigMaps(ns).Create(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-version", Namespace: ns},
		Data: map[string]string{"version": "1.0.0"}}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.cs.CoreV1().Namespaces().Delete(e.ctx, ns, metav1.DeleteOptions{}) })
	return ns, dir, app
}

// version is what the platform's ConfigMap says.
func (e *env) version(ns string) string {
	e.t.Helper()
	cm, err := e.cs.CoreV1().ConfigMaps(ns).Get(e.ctx, "web-version", metaGet)
	if err != nil {
		e.t.Fatal(err)
	}
	return cm.Data["version"]
}
