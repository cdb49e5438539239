package upgrade

// Planned are the versions the upgrade's hops go to, in order: the hops
// Run drove, then the solved path's it did not. When Run stopped before
// solving (at a hop it resumed), the hops driven alone: the rest of the
// path is not known.
func (r *Result) Planned() []string {
	path := make([]string, 0, len(r.Hops))
	for _, h := range r.Hops {
		path = append(path, h.To)
	}
	for _, h := range r.NotRun() {
		path = append(path, h.To)
	}
	return path
}

// NotRun are the hops of the solved path Run did not drive (it stopped
// at a hop before them, or at an error), in order, each without a run.
func (r *Result) NotRun() []Hop {
	if r.Solution == nil {
		return nil
	}
	// A resumed hop is driven before solving and is not on the path.
	driven := 0
	for _, h := range r.Hops {
		if !h.Resumed {
			driven++
		}
	}
	var out []Hop
	for i := driven; i < len(r.Solution.Path); i++ {
		out = append(out, Hop{From: VersionString(r.Solution.HopFrom(i)), To: r.Solution.Path[i].Version.String()})
	}
	return out
}
