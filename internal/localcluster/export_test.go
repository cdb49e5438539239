package localcluster

// SetChoosePorts replaces how Start chooses ports until restore is called.
// The package's tests do not run in parallel, so the swap is safe.
func SetChoosePorts(f func(apiServerPort int) (Ports, error)) (restore func()) {
	old := choosePorts
	choosePorts = f
	return func() { choosePorts = old }
}

// AllocatePorts is the real port chooser.
var AllocatePorts = allocatePorts

// ListenRange is the range ports are chosen from.
var ListenRange = listenRange
