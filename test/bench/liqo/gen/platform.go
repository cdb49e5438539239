package main

import (
	"bytes"
	"strings"
	"text/template"
)

// component is one workload of Liqo's chart in namespace liqo.
type component struct {
	Name      string // liqo-controller-manager
	Component string // controller-manager (label, container name)
	Image     string // without tag
	DaemonSet bool
	Replicas  int
	Args      []string
	Port      int    // metrics/health port
	Rules     string // its ClusterRole's rules, YAML
}

// Namespace is where Liqo runs.
const Namespace = "liqo"

// components are the workloads of the chart, in the order the upgrade
// runbook takes them after the CRDs.
var components = []component{
	{Name: "liqo-controller-manager", Component: "controller-manager", Image: "ghcr.io/liqotech/liqo-controller-manager", Replicas: 1, Port: 8080,
		Args:  []string{"--cluster-id=$(CLUSTER_ID)", "--liqo-namespace=$(POD_NAMESPACE)", "--enable-incoming-peering=true", "--resource-sharing-percentage=90", "--enable-node-failure-controller=false", "--networking-enabled=true", "--authentication-enabled=true", "--offloading-enabled=true", "--gateway-server-resources=networking.liqo.io/v1beta1/wggatewayservers", "--gateway-client-resources=networking.liqo.io/v1beta1/wggatewayclients", "--wg-gateway-server-class-name=wireguard", "--wg-gateway-client-class-name=wireguard", "--fabric-full-masquerade-enabled=false", "--default-limits-enforcement=None"},
		Rules: "- apiGroups: [authentication.liqo.io, core.liqo.io, ipam.liqo.io, networking.liqo.io, offloading.liqo.io, virtualkubelet.liqo.io]\n  resources: [\"*\"]\n  verbs: [get, list, watch, create, update, patch, delete]\n- apiGroups: [\"\"]\n  resources: [namespaces, nodes, pods, services, secrets, configmaps, serviceaccounts, events]\n  verbs: [get, list, watch, create, update, patch, delete]\n- apiGroups: [apps]\n  resources: [deployments, daemonsets]\n  verbs: [get, list, watch, create, update, patch, delete]\n- apiGroups: [rbac.authorization.k8s.io]\n  resources: [roles, rolebindings, clusterroles, clusterrolebindings]\n  verbs: [get, list, watch, create, update, patch, delete, bind, escalate]\n"},
	{Name: "liqo-webhook", Component: "webhook", Image: "ghcr.io/liqotech/webhook", Replicas: 1, Port: 8081,
		Args:  []string{"--cluster-id=$(CLUSTER_ID)", "--liqo-namespace=$(POD_NAMESPACE)", "--secret-name=liqo-webhook-certificate", "--webhook-port=9443", "--enable-resource-enforcement=false"},
		Rules: "- apiGroups: [core.liqo.io, networking.liqo.io, offloading.liqo.io, virtualkubelet.liqo.io]\n  resources: [\"*\"]\n  verbs: [get, list, watch]\n- apiGroups: [\"\"]\n  resources: [pods, namespaces, secrets]\n  verbs: [get, list, watch]\n- apiGroups: [admissionregistration.k8s.io]\n  resources: [mutatingwebhookconfigurations, validatingwebhookconfigurations]\n  verbs: [get, list, watch, patch]\n"},
	{Name: "liqo-crd-replicator", Component: "crd-replicator", Image: "ghcr.io/liqotech/crd-replicator", Replicas: 1, Port: 8082,
		Args:  []string{"--cluster-id=$(CLUSTER_ID)", "--liqo-namespace=$(POD_NAMESPACE)"},
		Rules: "- apiGroups: [authentication.liqo.io, networking.liqo.io, offloading.liqo.io]\n  resources: [\"*\"]\n  verbs: [get, list, watch, create, update, patch, delete]\n- apiGroups: [\"\"]\n  resources: [secrets]\n  verbs: [get, list, watch]\n"},
	{Name: "liqo-metric-agent", Component: "metric-agent", Image: "ghcr.io/liqotech/metric-agent", Replicas: 1, Port: 8443,
		Args:  []string{"--key-path=/certs/key.pem", "--cert-path=/certs/cert.pem", "--read-timeout=30s", "--write-timeout=30s"},
		Rules: "- apiGroups: [offloading.liqo.io]\n  resources: [virtualnodes]\n  verbs: [get, list, watch]\n- apiGroups: [\"\"]\n  resources: [nodes, nodes/proxy, pods]\n  verbs: [get, list, watch]\n"},
	{Name: "liqo-ipam", Component: "ipam", Image: "ghcr.io/liqotech/ipam", Replicas: 1, Port: 8083,
		Args:  []string{"--pod-namespace=$(POD_NAMESPACE)", "--lease-enabled=true", "--lease-duration=15s", "--lease-renew-deadline=10s", "--lease-retry-period=5s", "--graphviz=false", "--pod-cidr=10.244.0.0/16", "--service-cidr=10.96.0.0/12", "--reserved-pools=10.100.0.0/16"},
		Rules: "- apiGroups: [ipam.liqo.io, networking.liqo.io]\n  resources: [\"*\"]\n  verbs: [get, list, watch, create, update, patch, delete]\n- apiGroups: [coordination.k8s.io]\n  resources: [leases]\n  verbs: [get, list, watch, create, update, patch]\n"},
	{Name: "liqo-proxy", Component: "proxy", Image: "ghcr.io/liqotech/proxy", Replicas: 1, Port: 8118,
		Args:  []string{"--port=8118", "--allow-list=/etc/liqo/allow-list.txt"},
		Rules: "- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get, list, watch]\n"},
	{Name: "liqo-fabric", Component: "fabric", Image: "ghcr.io/liqotech/fabric", DaemonSet: true, Port: 8084,
		Args:  []string{"--node-name=$(NODE_NAME)", "--pod-name=$(POD_NAME)", "--metrics-address=:8084", "--health-probe-bind-address=:8085", "--enable-arp=true", "--disable-kernel-version-check=false"},
		Rules: "- apiGroups: [networking.liqo.io]\n  resources: [internalnodes, internalfabrics, genevetunnels, routeconfigurations, firewallconfigurations, firewallconfigurations/status, routeconfigurations/status]\n  verbs: [get, list, watch, create, update, patch, delete]\n- apiGroups: [\"\"]\n  resources: [nodes, pods]\n  verbs: [get, list, watch]\n"},
}

var funcs = template.FuncMap{"join": strings.Join}

var platformTemplates = map[string]string{
	"00-namespace.yaml": `# Liqo's namespace.
apiVersion: v1
kind: Namespace
metadata:
  name: liqo
  labels: {app.kubernetes.io/name: liqo, app.kubernetes.io/part-of: liqo, app.kubernetes.io/version: {{.Release}}}
`,
	"10-configuration.yaml": `# The cluster's identity and the proxy's allow list, read by the components.
apiVersion: v1
kind: ConfigMap
metadata:
  name: liqo-clusterid-configmap
  namespace: liqo
  labels: {app.kubernetes.io/name: liqo-clusterid-configmap, app.kubernetes.io/part-of: liqo, app.kubernetes.io/version: {{.Release}}}
data:
  CLUSTER_ID: bench-cluster-1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: liqo-proxy-allow-list
  namespace: liqo
  labels: {app.kubernetes.io/name: liqo-proxy-allow-list, app.kubernetes.io/part-of: liqo, app.kubernetes.io/version: {{.Release}}}
data:
  allow-list.txt: |
    10.96.0.1:443
`,
}

var componentTemplate = template.Must(template.New("component").Funcs(funcs).Parse(`# Liqo's {{.C.Component}}: its service account, ClusterRole and {{if .C.DaemonSet}}DaemonSet{{else}}Deployment{{end}}.
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{.C.Name}}
  namespace: liqo
  labels: {app.kubernetes.io/name: {{.C.Name}}, app.kubernetes.io/component: {{.C.Component}}, app.kubernetes.io/part-of: liqo, app.kubernetes.io/version: {{.Release}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{.C.Name}}
  labels: {app.kubernetes.io/name: {{.C.Name}}, app.kubernetes.io/component: {{.C.Component}}, app.kubernetes.io/part-of: liqo, app.kubernetes.io/version: {{.Release}}}
rules:
{{.C.Rules}}---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{.C.Name}}
  labels: {app.kubernetes.io/name: {{.C.Name}}, app.kubernetes.io/component: {{.C.Component}}, app.kubernetes.io/part-of: liqo, app.kubernetes.io/version: {{.Release}}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {{.C.Name}}}
subjects:
- {kind: ServiceAccount, name: {{.C.Name}}, namespace: liqo}
---
apiVersion: apps/v1
kind: {{if .C.DaemonSet}}DaemonSet{{else}}Deployment{{end}}
metadata:
  name: {{.C.Name}}
  namespace: liqo
  labels: {app.kubernetes.io/name: {{.C.Name}}, app.kubernetes.io/component: {{.C.Component}}, app.kubernetes.io/part-of: liqo, app.kubernetes.io/version: {{.Release}}}
spec:
{{- if .C.DaemonSet}}
  updateStrategy:
    rollingUpdate: {maxUnavailable: 1}
{{- else}}
  replicas: {{.C.Replicas}}
{{- end}}
  selector:
    matchLabels: {app.kubernetes.io/name: {{.C.Name}}, app.kubernetes.io/part-of: liqo}
  template:
    metadata:
      labels: {app.kubernetes.io/name: {{.C.Name}}, app.kubernetes.io/component: {{.C.Component}}, app.kubernetes.io/part-of: liqo}
    spec:
      serviceAccountName: {{.C.Name}}
      securityContext: {runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: {{.C.Component}}
        image: {{.C.Image}}:{{.Release}}
        imagePullPolicy: IfNotPresent
        args:
{{- range .C.Args}}
        - {{.}}
{{- end}}
        env:
        - name: POD_NAMESPACE
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: NODE_NAME
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
        - name: CLUSTER_ID
          valueFrom: {configMapKeyRef: {name: liqo-clusterid-configmap, key: CLUSTER_ID}}
        ports:
        - {name: metrics, containerPort: {{.C.Port}}, protocol: TCP}
        resources:
          requests: {cpu: 50m, memory: 100Mi}
          limits: {cpu: 500m, memory: 300Mi}
        securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
        readinessProbe:
          httpGet: {path: /readyz, port: {{.C.Port}}}
          initialDelaySeconds: 5
          periodSeconds: 10
        livenessProbe:
          httpGet: {path: /healthz, port: {{.C.Port}}}
          initialDelaySeconds: 15
          periodSeconds: 20
`))

// gatewayTemplates are the WireGuard gateway templates the
// controller-manager renders each peering's gateway from: a Deployment
// of the gateway, wireguard and geneve containers, and its Service.
var gatewayTemplates = template.Must(template.New("templates").Parse(`# The WireGuard gateway templates ({{.Release}}): the controller-manager
# renders each peering's gateway server or client from them.
{{- range $role := .Roles}}
---
apiVersion: networking.liqo.io/v1beta1
kind: WgGateway{{$role.Kind}}Template
metadata:
  name: wireguard-{{$role.Name}}
  namespace: liqo
  labels: {app.kubernetes.io/name: wireguard-{{$role.Name}}, app.kubernetes.io/component: gateway-template, app.kubernetes.io/part-of: liqo, app.kubernetes.io/version: {{$.Release}}}
spec:
  objectKind: {apiVersion: networking.liqo.io/v1beta1, kind: WgGateway{{$role.Kind}}}
  template:
    metadata:
      name: "{{"{{"}} .Name {{"}}"}}"
      namespace: "{{"{{"}} .Namespace {{"}}"}}"
      labels: {networking.liqo.io/component: gateway, networking.liqo.io/gateway-role: {{$role.Name}}}
    spec:
      mtu: "{{"{{"}} .Spec.MTU {{"}}"}}"
{{- if eq $role.Name "server"}}
      service:
        spec:
          type: "{{"{{"}} .Spec.Endpoint.ServiceType {{"}}"}}"
          ports:
          - {name: wireguard, port: "{{"{{"}} .Spec.Endpoint.Port {{"}}"}}", targetPort: "{{"{{"}} .Spec.Endpoint.Port {{"}}"}}", protocol: UDP}
{{- end}}
      deployment:
        spec:
          replicas: 1
          strategy: {type: Recreate}
          selector:
            matchLabels: {networking.liqo.io/component: gateway, networking.liqo.io/gateway-name: "{{"{{"}} .Name {{"}}"}}"}
          template:
            metadata:
              labels: {networking.liqo.io/component: gateway, networking.liqo.io/gateway-name: "{{"{{"}} .Name {{"}}"}}"}
            spec:
              serviceAccount: "{{"{{"}} .GatewayUID {{"}}"}}"
              containers:
              - name: gateway
                image: ghcr.io/liqotech/gateway:{{$.Release}}
                args:
                - '--name={{"{{"}} .Name {{"}}"}}'
                - '--namespace={{"{{"}} .Namespace {{"}}"}}'
                - '--remote-cluster-id={{"{{"}} .ClusterID {{"}}"}}'
                - '--gateway-uid={{"{{"}} .GatewayUID {{"}}"}}'
                - '--mode={{$role.Name}}'
                - '--container-name=gateway'
                - '--concurrent-containers-names=wireguard,geneve'
                - '--metrics-address=:8082'
                - '--health-probe-bind-address=:8083'
                - '--ping-enabled=true'
                - '--ping-loss-threshold=20'
                - '--ping-interval=2s'
                - '--ping-update-status-interval=10s'
                securityContext: {privileged: true, capabilities: {add: [NET_ADMIN, NET_RAW]}}
              - name: wireguard
                image: ghcr.io/liqotech/gateway/wireguard:{{$.Release}}
                args:
                - '--name={{"{{"}} .Name {{"}}"}}'
                - '--namespace={{"{{"}} .Namespace {{"}}"}}'
                - '--remote-cluster-id={{"{{"}} .ClusterID {{"}}"}}'
                - '--gateway-uid={{"{{"}} .GatewayUID {{"}}"}}'
                - '--mode={{$role.Name}}'
                - '--container-name=wireguard'
                - '--mtu={{"{{"}} .Spec.MTU {{"}}"}}'
                - '--listen-port={{"{{"}} .Spec.Endpoint.Port {{"}}"}}'
                - '--metrics-address=:8084'
                - '--health-probe-bind-address=:8085'
                - '--implementation=kernel'
                securityContext: {capabilities: {add: [NET_ADMIN, NET_RAW]}}
              - name: geneve
                image: ghcr.io/liqotech/gateway/geneve:{{$.Release}}
                args:
                - '--name={{"{{"}} .Name {{"}}"}}'
                - '--namespace={{"{{"}} .Namespace {{"}}"}}'
                - '--remote-cluster-id={{"{{"}} .ClusterID {{"}}"}}'
                - '--node-name=$(NODE_NAME)'
                - '--pod-name=$(POD_NAME)'
                - '--gateway-uid={{"{{"}} .GatewayUID {{"}}"}}'
                - '--mode={{$role.Name}}'
                - '--container-name=geneve'
                - '--geneve-port=6091'
                - '--metrics-address=:8086'
                - '--health-probe-bind-address=:8087'
                env:
                - name: NODE_NAME
                  valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
                - name: POD_NAME
                  valueFrom: {fieldRef: {fieldPath: metadata.name}}
                securityContext: {capabilities: {add: [NET_ADMIN, NET_RAW]}}
{{- end}}
`))

type role struct{ Name, Kind string }

// platformFiles are the namespace, configuration and workloads of a
// release (the install), by file name.
func platformFiles(release string) (map[string][]byte, error) {
	out := map[string][]byte{}
	data := map[string]any{"Release": release}
	for name, text := range platformTemplates {
		b, err := execute(template.Must(template.New(name).Parse(text)), data)
		if err != nil {
			return nil, err
		}
		out[name] = b
	}
	for i, c := range components {
		b, err := execute(componentTemplate, map[string]any{"C": c, "Release": release})
		if err != nil {
			return nil, err
		}
		out[twoDigits(20+i)+"-"+c.Component+".yaml"] = b
	}
	b, err := templatesFile(release)
	if err != nil {
		return nil, err
	}
	out["90-gateway-templates.yaml"] = b
	return out, nil
}

func templatesFile(release string) ([]byte, error) {
	return execute(gatewayTemplates, map[string]any{"Release": release, "Roles": []role{{"server", "Server"}, {"client", "Client"}}})
}

func execute(t *template.Template, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, err
	}
	return append([]byte(generatedLine), b.Bytes()...), nil
}

func twoDigits(n int) string {
	return string([]byte{byte('0' + n/10), byte('0' + n%10)})
}
