package localcluster

import (
	"os"
	"path/filepath"
	"testing"
)

// A watch is logged when its response starts and again when it ends: it
// is one request, not two, or every count of a client's requests would
// weigh its watches twice.
func TestReadAuditFileCountsAWatchOnce(t *testing.T) {
	log := `{"auditID":"a","stage":"ResponseStarted","verb":"watch","requestURI":"/api/v1/pods?watch=true"}
{"auditID":"b","stage":"ResponseComplete","verb":"get","requestURI":"/api/v1/namespaces/x"}
{"auditID":"a","stage":"ResponseComplete","verb":"watch","requestURI":"/api/v1/pods?watch=true"}
{"auditID":"c","stage":"ResponseStarted","verb":"watch","requestURI":"/api/v1/nodes?watch=true"}
{"auditID":"d","stage":"ResponseComp`
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	evs, err := ReadAuditFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.AuditID+" "+e.Verb+" "+e.Stage)
	}
	want := []string{"a watch ResponseComplete", "b get ResponseComplete", "c watch ResponseStarted"}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %q, want %q", got, want)
		}
	}
}
