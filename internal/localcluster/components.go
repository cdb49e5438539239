package localcluster

import (
	"strconv"
)

// component is one control-plane process and its command line.
type component struct {
	name string // also the binary name
	args []string
}

func loopbackURL(scheme string, port int) string {
	return scheme + "://127.0.0.1:" + strconv.Itoa(port)
}

func etcdComponent(l layout, name string, p Ports) component {
	client := loopbackURL("https", p.EtcdClient)
	peer := loopbackURL("http", p.EtcdPeer) // one member: the peer port never carries traffic
	return component{name: "etcd", args: []string{
		"--name=" + name,
		"--data-dir=" + l.path("etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=" + name + "=" + peer,
		"--cert-file=" + l.pki("etcd.crt"),
		"--key-file=" + l.pki("etcd.key"),
		"--client-cert-auth=true",
		"--trusted-ca-file=" + l.pki("ca.crt"),
		// A throwaway single-member cluster: fast elections and no fsync
		// make start-up about a second faster and tests steadier on slow disks.
		"--heartbeat-interval=10",
		"--election-timeout=100",
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}}
}

func apiserverComponent(l layout, p Ports) component {
	return component{name: "kube-apiserver", args: []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(p.APIServer),
		"--etcd-servers=" + loopbackURL("https", p.EtcdClient),
		"--etcd-cafile=" + l.pki("ca.crt"),
		"--etcd-certfile=" + l.pki("apiserver-etcd-client.crt"),
		"--etcd-keyfile=" + l.pki("apiserver-etcd-client.key"),
		"--tls-cert-file=" + l.pki("apiserver.crt"),
		"--tls-private-key-file=" + l.pki("apiserver.key"),
		"--client-ca-file=" + l.pki("ca.crt"),
		"--kubelet-client-certificate=" + l.pki("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + l.pki("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority=" + l.pki("ca.crt"),
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + l.pki("sa.pub"),
		"--service-account-signing-key-file=" + l.pki("sa.key"),
		"--authorization-mode=Node,RBAC",
		"--service-cluster-ip-range=10.96.0.0/16",
		// 127.0.0.1 may not be an endpoint of the kubernetes Service; without
		// this the API server logs an error every ten seconds.
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--audit-policy-file=" + l.path("audit-policy.yaml"),
		"--audit-log-path=" + l.auditLog(),
		"--audit-log-format=json",
		"--cert-dir=" + l.path("pki"),
		"--profiling=false",
	}}
}

// controllerArgs are the flags kube-controller-manager and kube-scheduler
// share: their kubeconfig for everything, serving on loopback only.
func controllerArgs(l layout, name string, port int) []string {
	kc := l.componentKubeconfig(name)
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + l.path("pki", name),
		// The default 20 QPS throttles start-up by seconds on a cluster
		// that answers in milliseconds.
		"--kube-api-qps=500",
		"--kube-api-burst=1000",
		// One instance: leader election would only add seconds to start-up.
		"--leader-elect=false",
		"--profiling=false",
	}
}

func controllerManagerComponent(l layout, p Ports) component {
	return component{name: "kube-controller-manager", args: append(controllerArgs(l, "controller-manager", p.ControllerManager),
		"--service-account-private-key-file="+l.pki("sa.key"),
		"--root-ca-file="+l.pki("ca.crt"),
		"--cluster-signing-cert-file="+l.pki("ca.crt"),
		"--cluster-signing-key-file="+l.pki("ca.key"),
		"--use-service-account-credentials=true",
	)}
}

func schedulerComponent(l layout, p Ports) component {
	return component{name: "kube-scheduler", args: controllerArgs(l, "scheduler", p.Scheduler)}
}

func kwokComponent(l layout, p Ports) component {
	return component{name: "kwok", args: []string{
		"--kubeconfig=" + l.componentKubeconfig("kwok"),
		"--config=" + l.path("kwok.yaml"),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		"--node-ip=127.0.0.1",
		"--node-port=" + strconv.Itoa(p.Kwok),
		"--server-address=127.0.0.1:" + strconv.Itoa(p.Kwok),
		"--tls-cert-file=" + l.pki("kwok.crt"),
		"--tls-private-key-file=" + l.pki("kwok.key"),
		"--cidr=10.244.0.0/16",
		"--node-lease-duration-seconds=40",
	}}
}
