package localcluster

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"time"
)

// EnvClustersDir overrides where `upshift cluster up` keeps its clusters.
const EnvClustersDir = "UPSHIFT_CLUSTERS_DIR"

// DefaultName is the cluster name used when none is given.
const DefaultName = "upshift"

// AdminUser is the client-certificate user of the admin kubeconfig
// (group system:masters).
const AdminUser = "upshift-admin"

// Options describe one local cluster.
type Options struct {
	// Name tells clusters apart: a lowercase DNS label. Default "upshift".
	Name string
	// Nodes is the number of fake kwok nodes, untainted. Default 3.
	Nodes int
	// Dir holds the cluster's certificates, data, logs and PID files.
	// Default: <ClustersDir()>/<Name>.
	Dir string
	// BinDir holds the binaries; DefaultBinDir() when empty.
	BinDir string
	// NoBuild reports missing binaries instead of building them.
	NoBuild bool
	// APIServerPort is the API server's port on 127.0.0.1; 0 picks a free one.
	APIServerPort int
	// KubeletVersion is what the fake nodes' kubelets report (their label
	// upshift.dev/kubelet-version); empty: kwok's own version.
	KubeletVersion string
	// PodReadyDelay is how long kwok waits before a pod is Running and
	// Ready. Default 200ms.
	PodReadyDelay time.Duration
	// Detached clusters outlive this process (`upshift cluster up`); the
	// others die with it, even when it is killed with SIGKILL (tests).
	Detached bool
	// Progress receives build and start-up progress; nil discards it.
	Progress io.Writer
	// AuditRequestBodiesOf are users whose writes the audit log records at
	// Request level, with the request's body (Secret data included: for
	// test clusters), so a test can weigh what they write. Everything else
	// stays at Metadata level.
	AuditRequestBodiesOf []string
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`)

// ClustersDir is the parent directory of named clusters:
// $UPSHIFT_CLUSTERS_DIR, else os.UserCacheDir()/upshift/clusters.
func ClustersDir() (string, error) {
	return cacheDir(EnvClustersDir, "clusters")
}

// withDefaults validates the options and fills in defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if !nameRE.MatchString(o.Name) {
		return o, fmt.Errorf("invalid cluster name %q: use 1-40 lowercase letters, digits and '-', starting and ending with a letter or digit", o.Name)
	}
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.Nodes < 1 || o.Nodes > 200 {
		return o, fmt.Errorf("invalid node count %d: choose between 1 and 200 (--nodes)", o.Nodes)
	}
	if o.APIServerPort < 0 || o.APIServerPort > 65535 {
		return o, fmt.Errorf("invalid API server port %d: choose 1-65535, or 0 for a free one (--port)", o.APIServerPort)
	}
	if o.PodReadyDelay == 0 {
		o.PodReadyDelay = 200 * time.Millisecond
	}
	if o.PodReadyDelay < 0 {
		return o, fmt.Errorf("invalid pod ready delay %s: must not be negative", o.PodReadyDelay)
	}
	if o.Dir == "" {
		root, err := ClustersDir()
		if err != nil {
			return o, err
		}
		o.Dir = filepath.Join(root, o.Name)
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return o, fmt.Errorf("cluster directory %s: %w", o.Dir, err)
	}
	o.Dir = abs
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o, nil
}
