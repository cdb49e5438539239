package localcluster

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// AuditEvent is the part of an apiserver audit event that tests and the
// benchmark read: who did what to which object, and when (microseconds).
type AuditEvent struct {
	AuditID string `json:"auditID"`
	// Stage is the last stage logged for the request: ResponseComplete,
	// or ResponseStarted for a watch still open when the log was read.
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	// ImpersonatedUser is whom the user acted as (a controller acting as
	// a plan's ServiceAccount); nil when nobody was impersonated.
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser,omitempty"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestURI               string    `json:"requestURI"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time `json:"stageTimestamp"`
	// RequestObject is the request's body as JSON, for the users whose
	// writes are audited at Request level (Options.AuditRequestBodiesOf);
	// empty for everyone else.
	RequestObject json.RawMessage `json:"requestObject,omitempty"`
}

// IsWrite reports whether the request changes state (access and rules
// reviews, which only ask, and dry runs, which change nothing, are not
// writes).
func (e AuditEvent) IsWrite() bool {
	if e.DryRun() {
		return false
	}
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
	default:
		return false
	}
	// Access, rules and token reviews are created only to be answered:
	// nothing is stored.
	if e.ObjectRef != nil && strings.HasSuffix(e.ObjectRef.Resource, "reviews") {
		return false
	}
	return true
}

// Object is "resource namespace/name" for messages.
func (e AuditEvent) Object() string {
	if e.ObjectRef == nil {
		return e.RequestURI
	}
	r := e.ObjectRef
	s := r.Resource
	if r.Subresource != "" {
		s += "/" + r.Subresource
	}
	if r.Namespace != "" {
		return s + " " + r.Namespace + "/" + r.Name
	}
	return s + " " + r.Name
}

// ReadAudit reads the cluster's audit log (ResponseComplete events).
func (c *Cluster) ReadAudit() ([]AuditEvent, error) { return ReadAuditFile(c.AuditLogPath()) }

// ReadAuditFile reads an audit log written with the JSON backend: one
// event per request, in the order requests first appear. A long-running
// request (a watch) is logged when its response starts and again when it
// ends; it is one request, kept with its last stage.
func ReadAuditFile(path string) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []AuditEvent
	seen := map[string]int{} // auditID -> index in out
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// The apiserver may be mid-line: the last line can be partial.
			continue
		}
		if i, ok := seen[e.AuditID]; ok && e.AuditID != "" {
			out[i] = e
			continue
		}
		seen[e.AuditID] = len(out)
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read audit log %s: %w", path, err)
	}
	return out, nil
}

// ByUser keeps the events of one user: made by it, or made by another
// acting as it (impersonation).
func ByUser(events []AuditEvent, user string) []AuditEvent {
	var out []AuditEvent
	for _, e := range events {
		if e.User.Username == user || e.ImpersonatedUser != nil && e.ImpersonatedUser.Username == user {
			out = append(out, e)
		}
	}
	return out
}

// DryRun reports whether the request was a server-side dry run, which
// the server validates and answers but does not persist.
func (e AuditEvent) DryRun() bool {
	return strings.Contains(e.RequestURI, "dryRun=All")
}
