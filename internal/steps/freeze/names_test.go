package freeze

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// A freeze's name is readable when it can be, always a valid DNS label,
// and never shared by two freezes.
func TestName(t *testing.T) {
	long := strings.Repeat("platform-", 10)
	hash := regexp.MustCompile(`-[0-9a-f]{10}$`)
	for _, tc := range []struct {
		run, step string
		want      string // the whole name, or its prefix when hashed
		hashed    bool
	}{
		{run: "shop-2", step: "hold", want: "upshift-freeze-shop-2-hold"},
		{run: "liqo-1.2.0", step: "freeze", want: "upshift-freeze-liqo-1-2-0-freeze", hashed: true}, // dots dropped
		{run: "shop-2", step: "Freeze Peerings", want: "upshift-freeze-shop-2-freeze-peerings", hashed: true},
		{run: long, step: "hold", want: "upshift-freeze-platform-platform-platform-platform-p", hashed: true},
	} {
		got := Name(tc.run, tc.step)
		ok := got == tc.want
		if tc.hashed {
			ok = strings.HasPrefix(got, tc.want) && hash.MatchString(got) && len(got) == len(tc.want)+11
		}
		if !ok {
			t.Errorf("Name(%q, %q) = %q, want %q (hashed: %v)", tc.run, tc.step, got, tc.want, tc.hashed)
		}
		if msgs := validation.IsDNS1123Label(got); len(msgs) > 0 {
			t.Errorf("Name(%q, %q) = %q: not a DNS label: %v", tc.run, tc.step, got, msgs)
		}
	}
	if Name(long+"a", "hold") == Name(long+"b", "hold") {
		t.Error("two long runs share a freeze's name")
	}
	if Name("shop-2", "a.b") == Name("shop-2", "a-b") {
		t.Error("two steps whose names clean up alike share a freeze's name")
	}
}
