package kube

// Container waiting reasons that callers treat apart from the rest.
const (
	// CrashLoopBackOff: the container keeps exiting. Whether that is
	// final is the caller's call: a Job's backoffLimit decides how many
	// crashes its pods may have.
	CrashLoopBackOff = "CrashLoopBackOff"
	// ErrImagePull: the last pull failed. The kubelet retries with a
	// back-off (ImagePullBackOff), so a caller that can afford to wait a
	// few seconds may let a registry blip heal.
	ErrImagePull = "ErrImagePull"
)

// stuckReasons are the container waiting reasons after which a pod does
// not start until someone changes its spec, its image or its config (or
// the registry it pulls from). The one list every judge of pods uses.
var stuckReasons = map[string]bool{
	CrashLoopBackOff:             true,
	"ImagePullBackOff":           true,
	ErrImagePull:                 true,
	"ErrImageNeverPull":          true,
	"InvalidImageName":           true,
	"CreateContainerConfigError": true,
}

// StuckReason tells whether a container waiting for reason is stuck there
// (see stuckReasons).
func StuckReason(reason string) bool { return stuckReasons[reason] }
