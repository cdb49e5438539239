package crd

import "testing"

// Get and DigestOf find each embedded CRD by name from its file alone,
// and agree with All: the digest DigestOf reads without decoding is the
// one the decoded CRD is installed with.
func TestGetAndDigestOfAgreeWithAll(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no embedded CRD")
	}
	for _, want := range all {
		got, err := Get(want.Name)
		if err != nil {
			t.Fatalf("Get(%s): %v", want.Name, err)
		}
		if got.Name != want.Name || got.Annotations[AnnotationDigest] != want.Annotations[AnnotationDigest] {
			t.Errorf("Get(%s) = %s with digest %s, want %s", want.Name, got.Name, got.Annotations[AnnotationDigest], want.Annotations[AnnotationDigest])
		}
		d, err := DigestOf(want.Name)
		if err != nil {
			t.Fatalf("DigestOf(%s): %v", want.Name, err)
		}
		if d != want.Annotations[AnnotationDigest] {
			t.Errorf("DigestOf(%s) = %s, want %s", want.Name, d, want.Annotations[AnnotationDigest])
		}
	}
	for _, name := range []string{"widgets.example.com", "upgraderuns", ""} {
		if _, err := Get(name); err == nil {
			t.Errorf("Get(%q) found a CRD", name)
		}
		if _, err := DigestOf(name); err == nil {
			t.Errorf("DigestOf(%q) found a digest", name)
		}
	}
}

// Whether a cluster's copy of a CRD is current is told from the digest
// alone (crds.Ensure); decoding the CRD was most of that check's cost.
// go test -run '^$' -bench . ./config/crd/
func BenchmarkIsCurrentCheck(b *testing.B) {
	b.Run("decode every CRD (Get before)", func(b *testing.B) {
		for b.Loop() {
			if _, err := All(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode the CRD", func(b *testing.B) {
		for b.Loop() {
			if _, err := Get(UpgradeRuns); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("digest only", func(b *testing.B) {
		for b.Loop() {
			if _, err := DigestOf(UpgradeRuns); err != nil {
				b.Fatal(err)
			}
		}
	})
}
