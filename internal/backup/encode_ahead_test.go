package backup

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/step"
)

// A snapshot encoded ahead of its run and completed for the run's UID is
// byte for byte, checksum and counts, the snapshot Encode encodes with
// that RunUID, and reads as one gzip stream with the standard library too.
func TestEncodedAheadIsTheEncodingOfTheSnapshotForTheRun(t *testing.T) {
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "shop"},
		"data":     map[string]any{"html": "<b>&</b>", "big": string(bytes.Repeat([]byte("x"), 1<<16))},
	}}
	snap := Snapshot{Entries: []Entry{
		{Ref: step.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "settings"}, Object: cm},
		{Ref: step.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "absent"}},
	}}
	ahead, err := EncodeAhead(&snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, uid := range []string{"0f9b3c1e-3f5e-4d1a-9c55-6a1f0c2d7e11", ""} {
		withUID := snap
		withUID.RunUID = uid
		want, err := Encode(&withUID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ahead.For(uid)
		if err != nil {
			t.Fatal(err)
		}
		wantRaw, err := gunzip(want.packed)
		if err != nil {
			t.Fatal(err)
		}
		gotRaw, err := gunzip(got.packed)
		if err != nil {
			t.Fatalf("run %q: the completed encoding does not unpack: %v", uid, err)
		}
		if !bytes.Equal(gotRaw, wantRaw) {
			t.Errorf("run %q: unpacked\n%.200s…\nwant\n%.200s…", uid, gotRaw, wantRaw)
		}
		if got.sha256 != want.sha256 || got.sha256 != sha256Hex(gotRaw) {
			t.Errorf("run %q: checksum %s, want %s (of the JSON %s)", uid, got.sha256, want.sha256, sha256Hex(gotRaw))
		}
		if got.objects != 1 || got.absent != 1 || got.RunUID() != uid {
			t.Errorf("run %q: counts %d/%d, run %q; want 1 object, 1 absent, run %q", uid, got.objects, got.absent, got.RunUID(), uid)
		}
		zr, err := stdgzip.NewReader(bytes.NewReader(got.packed))
		if err != nil {
			t.Fatal(err)
		}
		if std, err := io.ReadAll(zr); err != nil || !bytes.Equal(std, wantRaw) {
			t.Errorf("run %q: compress/gzip reads %d bytes (%v), want the %d of the snapshot", uid, len(std), err, len(wantRaw))
		}
	}
}
