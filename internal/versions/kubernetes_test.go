package versions

import "testing"

func TestKubernetesDropsTheDistributionSuffix(t *testing.T) {
	for in, want := range map[string]string{
		"v1.34.4":             "1.34.4",
		"v1.30.2-eks-1552ad0": "1.30.2",
		"v1.29.3+k3s1":        "1.29.3",
		"1.31.0-gke.1000":     "1.31.0",
	} {
		got, err := Kubernetes(in)
		if err != nil || got.String() != want {
			t.Errorf("Kubernetes(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	if _, err := Kubernetes("latest"); err == nil {
		t.Error(`Kubernetes("latest") gave no error`)
	}
}
