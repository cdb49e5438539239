// Package window tells when changes may start: maintenance windows, each
// a cron schedule of starts, a duration and a time zone, as apps and
// platform plans declare them. It is pure (the caller passes the time),
// so the decisions are table-tested with any clock, and
// duration-aware: a change that needs longer than what is left of the
// open window waits for the next window long enough for it.
package window

import (
	"fmt"
	"time"
	// The time zone database goes into the binary: the controller's image
	// has no /usr/share/zoneinfo, and a window must read the same there.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Spec is a window as a resource declares it.
type Spec struct {
	// Schedule of the window's starts, in cron's five fields ("0 2 * * 6":
	// Saturdays at 02:00).
	Schedule string
	// Duration the window stays open from each start.
	Duration time.Duration
	// TimeZone the schedule is read in, an IANA name; empty: UTC.
	TimeZone string
}

// Window is a Spec parsed.
type Window struct {
	sched    cron.Schedule
	duration time.Duration
}

// parser reads cron's standard five fields and the @-descriptors
// (@daily, @weekly).
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Parse checks a spec; every error names its field under path and the
// fix.
func Parse(s Spec, path *field.Path) (*Window, field.ErrorList) {
	var errs field.ErrorList
	loc := time.UTC
	if s.TimeZone != "" {
		var err error
		if loc, err = time.LoadLocation(s.TimeZone); err != nil {
			errs = append(errs, field.Invalid(path.Child("timeZone"), s.TimeZone, "not a time zone: use an IANA name such as Europe/Paris or America/New_York"))
		}
	}
	sched, err := parser.Parse(s.Schedule)
	if err != nil {
		errs = append(errs, field.Invalid(path.Child("schedule"), s.Schedule, fmt.Sprintf("%v; use cron's five fields, e.g. \"0 2 * * 6\" for Saturdays at 02:00", err)))
	}
	if s.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("duration"), s.Duration.String(), "must be a positive duration such as 4h"))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if loc != time.UTC {
		sched = inZone{sched, loc}
	}
	return &Window{sched: sched, duration: s.Duration}, nil
}

// inZone reads a schedule in a time zone: cron's schedules take it from
// the time they are asked about.
type inZone struct {
	cron.Schedule
	loc *time.Location
}

func (z inZone) Next(t time.Time) time.Time { return z.Schedule.Next(t.In(z.loc)) }

// maxStarts bounds the starts looked at in one question: a schedule that
// starts every minute with a window of days would otherwise take long.
const maxStarts = 100_000

// closes is when the window open at now closes, openings that overlap
// joined, looked at no further than enough (a window that stays open
// that long is as good as one that stays open longer); ok is false when
// it is closed at now.
func (w *Window) closes(now time.Time, enough time.Duration) (end time.Time, ok bool) {
	s := w.sched.Next(now.Add(-w.duration))
	for i := 0; i < maxStarts && !s.IsZero(); i++ {
		opened := !s.After(now) // an opening that began by now
		joins := end.After(now) && !s.After(end) && end.Sub(now) < enough
		if !opened && !joins {
			break
		}
		if e := s.Add(w.duration); e.After(end) {
			end = e
		}
		s = w.sched.Next(s)
	}
	return end, end.After(now)
}

// Decision is whether a change may start now, and if not, when.
type Decision struct {
	// Start: the change may start now.
	Start bool
	// Next is when it may start, when it may not now (zero: never, within
	// the starts looked at).
	Next time.Time
	// Closes is when the window it starts in closes.
	Closes time.Time
}

// Decide tells whether a change that needs need may start at now inside
// one of the windows: one open now with need left, or else the soonest
// start of a window long enough. No windows: always.
func Decide(ws []*Window, now time.Time, need time.Duration) Decision {
	if len(ws) == 0 {
		return Decision{Start: true}
	}
	var best Decision
	for _, w := range ws {
		if end, open := w.closes(now, need); open && end.Sub(now) >= need {
			if !best.Start || end.After(best.Closes) {
				best = Decision{Start: true, Closes: end}
			}
		}
	}
	if best.Start {
		return best
	}
	for _, w := range ws {
		if w.duration < need {
			continue
		}
		if s := w.sched.Next(now); !s.IsZero() && (best.Next.IsZero() || s.Before(best.Next)) {
			best.Next, best.Closes = s, s.Add(w.duration)
		}
	}
	return best
}

// ParseAll parses a resource's windows (spec.windows), each error under
// path's index.
func ParseAll(specs []v1alpha1.UpgradeWindow, path *field.Path) ([]*Window, field.ErrorList) {
	var ws []*Window
	var errs field.ErrorList
	for i, s := range specs {
		w, werrs := Parse(Spec{Schedule: s.Schedule, Duration: s.Duration.Duration, TimeZone: s.TimeZone}, path.Index(i))
		errs = append(errs, werrs...)
		if w != nil {
			ws = append(ws, w)
		}
	}
	return ws, errs
}
