package window

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func parse(t *testing.T, schedule string, d time.Duration, tz string) *Window {
	t.Helper()
	w, errs := Parse(Spec{Schedule: schedule, Duration: d, TimeZone: tz}, field.NewPath("windows").Index(0))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return w
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// A change starts in an open window with enough of it left, else at the
// soonest start of a window long enough for it; with an injected clock,
// across days, time zones and overlapping openings.
func TestDecide(t *testing.T) {
	saturdays := parse(t, "0 2 * * 6", 4*time.Hour, "")       // Sat 02:00–06:00 UTC
	paris := parse(t, "0 2 * * *", time.Hour, "Europe/Paris") // 02:00–03:00 Paris: 01:00–02:00 UTC in winter
	hourly := parse(t, "0 * * * *", 90*time.Minute, "")       // always open, openings overlapping
	for _, tt := range []struct {
		name   string
		ws     []*Window
		now    string
		need   time.Duration
		start  bool
		next   string // "" when Start, or never
		closes string
	}{
		{"no windows: always", nil, "2026-11-28T12:00:00Z", time.Hour, true, "", ""},
		{"inside, time enough", []*Window{saturdays}, "2026-11-28T03:00:00Z", 30 * time.Minute, true, "", "2026-11-28T06:00:00Z"},
		{"inside, too little left", []*Window{saturdays}, "2026-11-28T05:45:00Z", 30 * time.Minute, false, "2026-12-05T02:00:00Z", "2026-12-05T06:00:00Z"},
		{"before it", []*Window{saturdays}, "2026-11-27T12:00:00Z", time.Hour, false, "2026-11-28T02:00:00Z", "2026-11-28T06:00:00Z"},
		{"at its very start", []*Window{saturdays}, "2026-11-28T02:00:00Z", time.Hour, true, "", "2026-11-28T06:00:00Z"},
		{"at its very end", []*Window{saturdays}, "2026-11-28T06:00:00Z", time.Minute, false, "2026-12-05T02:00:00Z", "2026-12-05T06:00:00Z"},
		{"longer than any window: never", []*Window{saturdays}, "2026-11-27T12:00:00Z", 5 * time.Hour, false, "", ""},
		{"in a time zone", []*Window{paris}, "2026-11-29T01:30:00Z", 20 * time.Minute, true, "", "2026-11-29T02:00:00Z"},
		{"in a time zone, before it", []*Window{paris}, "2026-11-29T00:30:00Z", 20 * time.Minute, false, "2026-11-29T01:00:00Z", "2026-11-29T02:00:00Z"},
		{"overlapping openings joined", []*Window{hourly}, "2026-11-29T10:45:00Z", 80 * time.Minute, true, "", "2026-11-29T12:30:00Z"},
		{"the window that is open", []*Window{saturdays, paris}, "2026-11-29T01:30:00Z", 10 * time.Minute, true, "", "2026-11-29T02:00:00Z"},
		{"the sooner of two", []*Window{saturdays, paris}, "2026-11-27T12:00:00Z", 30 * time.Minute, false, "2026-11-28T01:00:00Z", "2026-11-28T02:00:00Z"},
		{"the sooner of those long enough", []*Window{saturdays, paris}, "2026-11-27T12:00:00Z", 2 * time.Hour, false, "2026-11-28T02:00:00Z", "2026-11-28T06:00:00Z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.ws, at(tt.now), tt.need)
			if d.Start != tt.start {
				t.Fatalf("Start = %v (%+v), want %v", d.Start, d, tt.start)
			}
			if want := tt.next; want != "" && !d.Next.Equal(at(want)) || want == "" && !d.Next.IsZero() {
				t.Errorf("Next = %s, want %q", d.Next.UTC().Format(time.RFC3339), want)
			}
			if want := tt.closes; want != "" && !d.Closes.Equal(at(want)) {
				t.Errorf("Closes = %s, want %s", d.Closes.UTC().Format(time.RFC3339), want)
			}
		})
	}
}

// A window that cannot be read is refused naming its field and the fix.
func TestParseNamesTheField(t *testing.T) {
	_, errs := Parse(Spec{Schedule: "every saturday", Duration: 0, TimeZone: "Mars/Olympus"}, field.NewPath("spec", "windows").Index(0))
	got := errs.ToAggregate().Error()
	for _, want := range []string{"spec.windows[0].schedule", "cron's five fields", "spec.windows[0].duration", "spec.windows[0].timeZone", "IANA name"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q lack %q", got, want)
		}
	}
}
