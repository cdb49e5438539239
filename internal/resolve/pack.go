package resolve

import "github.com/upshift-dev/upshift/internal/runstore"

// sourcesPack is a plan's sources packed for the run store (megabytes of
// CRDs take tens of milliseconds to encode and compress), packed once,
// on a goroutine of its own from PackAhead on.
type sourcesPack struct {
	done   chan struct{}
	packed *runstore.PackedSources
	err    error
}

// PackAhead starts packing the sources, so that a run about to start
// finds them packed: Preflight calls it, and packs while it waits on the
// API server. A plan that is only previewed, or whose run resumes, packs
// for nothing, on a core that preflight leaves idle.
func (p *Plan) PackAhead() {
	if p.pack != nil {
		return
	}
	sp := &sourcesPack{done: make(chan struct{})}
	p.pack = sp
	spec, sources := p.Plan.Spec, p.Sources
	go func() {
		defer close(sp.done)
		sp.packed, sp.err = runstore.PackSources(spec, sources)
	}()
}

// PackedSources waits for the packed sources, packing them now if
// nothing asked before.
func (p *Plan) PackedSources() (*runstore.PackedSources, error) {
	p.PackAhead()
	<-p.pack.done
	return p.pack.packed, p.pack.err
}
