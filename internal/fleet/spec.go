package fleet

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Spec is a ClusterVersion's spec made ready to decide on: every cluster
// in exactly one wave, limits defaulted.
type Spec struct {
	Clusters []Member
	Waves    []WaveSpec
	// Required is requiredAvailableCount.
	Required int
	Revert   bool
	Suspend  bool
	// MemberStep: spec.member is set, so each cluster this rollout
	// upgrades runs it after its node pools and before its service in
	// (ActionUpgradeMember).
	MemberStep bool
}

// Member is one cluster and the version it should run.
type Member struct {
	ID      string
	Version string
	Wave    int
}

// WaveSpec is a wave with its limits.
type WaveSpec struct {
	Name           string
	MaxConcurrency int
	MaxUnavailable int
	Soak           time.Duration
	Approval       bool
}

// Target is a digest of the rollout's target: each cluster's id and
// version, in id order (the order of spec.clusters is not a target).
func (s Spec) Target() string {
	lines := make([]string, len(s.Clusters))
	for i, c := range s.Clusters {
		lines[i] = c.ID + "=" + c.Version
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:8])
}

// DefaultWave names the one wave of a fleet that declares none.
const DefaultWave = "all"

// Compile checks what the API server's schema cannot (wave members exist,
// every cluster in a wave) and assigns each cluster its wave: the first
// that names or selects it. Errors name the field and the fix.
func Compile(s v1alpha1.ClusterVersionSpec) (Spec, error) {
	out := Spec{Required: int(max(s.RequiredAvailableCount, 1)), Revert: s.OnFailure == v1alpha1.FailureRevert, Suspend: s.Suspend, MemberStep: s.Member != nil}
	index := map[string]int{}
	for i, c := range s.Clusters {
		if _, dup := index[c.ID]; dup {
			return Spec{}, fmt.Errorf("spec.clusters[%d].id: %q is listed twice: give each cluster once", i, c.ID)
		}
		index[c.ID] = i
		out.Clusters = append(out.Clusters, Member{ID: c.ID, Version: c.Version, Wave: -1})
	}
	if len(s.Waves) == 0 {
		out.Waves = []WaveSpec{{Name: DefaultWave, MaxConcurrency: 1, MaxUnavailable: 1}}
		for i := range out.Clusters {
			out.Clusters[i].Wave = 0
		}
		return out, nil
	}
	for w, wave := range s.Waves {
		ws := WaveSpec{Name: wave.Name, MaxConcurrency: int(max(wave.MaxConcurrency, 1)), Approval: wave.Approval}
		ws.MaxUnavailable = ws.MaxConcurrency
		if wave.MaxUnavailable != nil {
			ws.MaxUnavailable = int(max(*wave.MaxUnavailable, 1))
		}
		if wave.Soak != nil {
			ws.Soak = wave.Soak.Duration
		}
		out.Waves = append(out.Waves, ws)
		for j, id := range wave.Clusters {
			i, ok := index[id]
			if !ok {
				return Spec{}, fmt.Errorf("spec.waves[%d].clusters[%d]: %q is not in spec.clusters: add it there or remove it from the wave", w, j, id)
			}
			if out.Clusters[i].Wave < 0 {
				out.Clusters[i].Wave = w
			}
		}
		if wave.Selector != nil {
			sel, err := metav1.LabelSelectorAsSelector(wave.Selector)
			if err != nil {
				return Spec{}, fmt.Errorf("spec.waves[%d].selector: %w", w, err)
			}
			for i, c := range s.Clusters {
				if out.Clusters[i].Wave < 0 && sel.Matches(labels.Set(c.Labels)) {
					out.Clusters[i].Wave = w
				}
			}
		}
	}
	var orphans []string
	for _, c := range out.Clusters {
		if c.Wave < 0 {
			orphans = append(orphans, c.ID)
		}
	}
	if len(orphans) > 0 {
		return Spec{}, fmt.Errorf("spec.waves: clusters %v are in no wave: name them in a wave's clusters, or add a last wave with selector: {}", orphans)
	}
	for w := range out.Waves {
		if !slices.ContainsFunc(out.Clusters, func(c Member) bool { return c.Wave == w }) {
			return Spec{}, fmt.Errorf("spec.waves[%d] (%s): no cluster is in it (each goes to the first wave that names or selects it): remove the wave or fix its clusters", w, out.Waves[w].Name)
		}
	}
	return out, nil
}

// members returns the indexes of wave w's clusters, in spec order.
func (s Spec) members(w int) []int {
	var out []int
	for i, c := range s.Clusters {
		if c.Wave == w {
			out = append(out, i)
		}
	}
	return out
}
