package freeze

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// A freeze's name is readable, always a valid DNS label, and never shared
// by two freezes: of other runs namespaces, other runs, other steps.
func TestName(t *testing.T) {
	long := strings.Repeat("platform-", 10)
	hash := regexp.MustCompile(`^(.*)-[0-9a-f]{10}$`)
	for _, tc := range []struct {
		run, step string
		want      string // the name before its hash
	}{
		{run: "shop-2", step: "hold", want: "upshift-freeze-shop-2-hold"},
		{run: "liqo-1.2.0", step: "freeze", want: "upshift-freeze-liqo-1-2-0-freeze"}, // dots dropped
		{run: "shop-2", step: "Freeze Peerings", want: "upshift-freeze-shop-2-freeze-peerings"},
		{run: long, step: "hold", want: "upshift-freeze-platform-platform-platform-platform-p"},
	} {
		got := Name("upshift-system", tc.run, tc.step)
		if m := hash.FindStringSubmatch(got); m == nil || m[1] != tc.want {
			t.Errorf("Name(%q, %q) = %q, want %q and a hash", tc.run, tc.step, got, tc.want)
		}
		if msgs := validation.IsDNS1123Label(got); len(msgs) > 0 {
			t.Errorf("Name(%q, %q) = %q: not a DNS label: %v", tc.run, tc.step, got, msgs)
		}
	}
	for _, pair := range [][2]string{
		{Name("upshift-system", long+"a", "hold"), Name("upshift-system", long+"b", "hold")},
		{Name("upshift-system", "shop-2", "a.b"), Name("upshift-system", "shop-2", "a-b")},
		{Name("upshift-system", "shop-2", "hold"), Name("team-runs", "shop-2", "hold")},
	} {
		if pair[0] == pair[1] {
			t.Errorf("two freezes share the name %s", pair[0])
		}
	}
}
