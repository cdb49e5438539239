package main

import "sort"

// The helpers below write the small schemas of Liqo's own types the way
// controller-gen prints them: a type, a description, nested properties.

type prop struct {
	name string
	s    schema
}

func p(name string, s schema) prop { return prop{name, s} }

func obj(desc string, props ...prop) schema {
	s := schema{"type": "object", "description": desc}
	if len(props) > 0 {
		ps := schema{}
		for _, p := range props {
			ps[p.name] = p.s
		}
		s["properties"] = ps
	}
	return s
}

// required marks properties of an object as required.
func required(s schema, names ...string) schema {
	sort.Strings(names)
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	s["required"] = out
	return s
}

func str(desc string) schema { return schema{"type": "string", "description": desc} }

func strFormat(desc, format string) schema {
	return schema{"type": "string", "format": format, "description": desc}
}

func integer(desc string) schema {
	return schema{"type": "integer", "format": "int32", "description": desc}
}

func boolean(desc string) schema { return schema{"type": "boolean", "description": desc} }

func enum(desc string, values ...string) schema {
	vs := make([]any, len(values))
	for i, v := range values {
		vs[i] = v
	}
	return schema{"type": "string", "enum": vs, "description": desc}
}

func arr(desc string, items schema) schema {
	return schema{"type": "array", "items": items, "description": desc}
}

func strMap(desc string) schema {
	return schema{"type": "object", "additionalProperties": schema{"type": "string"}, "description": desc}
}

func strList(desc string) schema { return arr(desc, schema{"type": "string"}) }

// opaque is an object whose fields are not pruned (a template).
func opaque(desc string) schema {
	return schema{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "description": desc}
}

func clusterID(desc string) schema {
	return schema{"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "description": desc}
}

func cidr(desc string) schema { return schema{"type": "string", "format": "cidr", "description": desc} }

func ip(desc string) schema { return schema{"type": "string", "format": "ipv4", "description": desc} }

// localRef is a corev1.LocalObjectReference.
func (k k8sSchemas) localRef(desc string) schema {
	return k.embed("io.k8s.api.core.v1.LocalObjectReference", desc)
}

// objRef is a corev1.ObjectReference.
func (k k8sSchemas) objRef(desc string) schema {
	return k.embed("io.k8s.api.core.v1.ObjectReference", desc)
}

func (k k8sSchemas) resources(desc string) schema {
	return schema{"type": "object", "additionalProperties": k.named(quantity, 0), "description": desc}
}

// conditions is a []metav1.Condition, as kubebuilder prints it.
func (k k8sSchemas) conditions(desc string) schema {
	s := arr(desc, k.embed("io.k8s.apimachinery.pkg.apis.meta.v1.Condition", ""))
	s["x-kubernetes-list-type"] = "map"
	s["x-kubernetes-list-map-keys"] = []any{"type"}
	return s
}

// liqoConditions are Liqo's own condition lists (type, status, reason,
// message, times), as in ForeignCluster's modules.
func liqoConditions(desc string, types ...string) schema {
	return arr(desc, required(obj("Condition contains details about the state of a resource.",
		p("type", enum("Type of the condition.", types...)),
		p("status", enum("Status of the condition.", "True", "False", "Unknown", "Established", "Pending", "Error")),
		p("lastTransitionTime", strFormat("LastTransitionTime -> timestamp for when the condition last transitioned from one status to another.", "date-time")),
		p("reason", str("Reason -> Machine-readable, UpperCamelCase text indicating the reason for the condition's last transition.")),
		p("message", str("Message -> Human-readable message indicating details about the last status transition.")),
	), "type", "status"))
}

// deploymentTemplate is Liqo's DeploymentTemplate: metadata and a full
// appsv1.DeploymentSpec.
func (k k8sSchemas) deploymentTemplate(desc string) schema {
	return obj(desc,
		p("metadata", obj("Metadata of the deployment.")),
		p("spec", k.embed("io.k8s.api.apps.v1.DeploymentSpec", "Spec of the deployment.")),
	)
}

// serviceTemplate is Liqo's ServiceTemplate: metadata and a full
// corev1.ServiceSpec.
func (k k8sSchemas) serviceTemplate(desc string) schema {
	return obj(desc,
		p("metadata", obj("Metadata of the service.")),
		p("spec", k.embed("io.k8s.api.core.v1.ServiceSpec", "Spec of the service.")),
	)
}

func (k k8sSchemas) tolerations(desc string) schema {
	return arr(desc, k.embed("io.k8s.api.core.v1.Toleration", ""))
}

// endpoint is where a gateway is reached.
func endpoint(desc string) schema {
	return obj(desc,
		p("addresses", strList("Addresses specifies the addresses of the endpoint.")),
		p("port", integer("Port specifies the port of the endpoint.")),
		p("protocol", enum("Protocol specifies the protocol of the endpoint.", "TCP", "UDP")),
	)
}

func internalEndpoint(desc string) schema {
	return obj(desc,
		p("ip", ip("IP specifies the IP address of the gateway in the internal network.")),
		p("node", str("Node specifies the node where the gateway is running.")),
	)
}
