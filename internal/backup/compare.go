package backup

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/redact"
)

// maxShown bounds how much of a value a difference prints.
const maxShown = 120

// Compare returns the differences between an object's snapshot and the
// live object, as "<field path> was <snapshot value> is <live value>",
// sorted by path. It ignores what the API server and controllers maintain
// (status, kube.ServerOwnedMetadata, kube.ControllerAnnotations). An empty
// map equals a missing one. A Secret's values are compared but shown
// redacted.
//
// Each difference is then judged by field ownership (metadata.managedFields
// of both objects), so that a field another controller took over after the
// restore does not fail it. A field's owners are the managedFields entries
// that hold it or a part of it; when none does, those that hold its
// nearest ancestor (an atomic selector it is inside, or the labels map of
// a label nobody claims). A difference counts, and is returned in
// differences, when:
//
//  1. either object carries no managedFields: there is nothing to judge
//     by, so every field is compared, as before field ownership was read;
//  2. the live object has no owner for the field (it was removed, or
//     nobody claims it);
//  3. a live owner is Upshift's (kube.IsUpshiftManager): Upshift wrote the
//     field, or the restore took it over, and the value does not hold;
//  4. a live owner, not writing through the scale subresource, held the
//     field in the snapshot too (by manager name): the manager that set
//     it before the stage now sets another value, as an operator the
//     stage upgraded and that still runs would.
//
// Any other difference is returned in notCompared, naming its new owners:
// a manager that did not hold the field before the stage took it over
// after the restore (an HPA created since, a sidecar injector), or every
// live owner wrote it through the scale subresource (an autoscaler or
// kubectl scale setting replicas: run-time scaling, not configuration a
// restore puts back, even when that autoscaler already scaled the object
// before the stage).
//
// What the restore itself leaves (restore_ownership_test.go checks it on
// a real API server): its PUT
// carries the snapshot's managedFields, which the API server takes as
// given, and then gives the fields the PUT changed to the restore's own
// manager (upshift-restore), taking them from every other. So right after
// a restore, a field holds either the snapshot's value under the
// snapshot's owners, or the snapshot's value under upshift-restore; any
// difference found later was written since, by the owner the live object
// names.
func Compare(snapshot, live *unstructured.Unstructured) (differences, notCompared []string) {
	switch {
	case snapshot == nil && live == nil:
		return nil, nil
	case snapshot == nil:
		return []string{"object was <absent> is present"}, nil
	case live == nil:
		return []string{"object was present is <absent>"}, nil
	}
	a, b := comparable(snapshot), comparable(live)
	shownA, shownB := a, b
	if isSecret(snapshot) || isSecret(live) {
		shownA, shownB = redact.Object(a), redact.Object(b)
	}
	// What is shown lands in the run's status: env values are hidden too.
	shownA, shownB = redact.EnvValues(shownA), redact.EnvValues(shownB)
	var diffs []difference
	walk("", a.Object, b.Object, shownA.Object, shownB.Object, &diffs)
	if len(diffs) == 0 {
		return nil, nil
	}
	before, errBefore := ownershipOf(snapshot)
	now, errNow := ownershipOf(live)
	for _, d := range diffs {
		switch owners := takenOver(d.path, before, now); {
		case errBefore != nil:
			differences = append(differences, fmt.Sprintf("%s (snapshot's field ownership unreadable, every field compared: %v)", d.text, errBefore))
		case errNow != nil:
			differences = append(differences, fmt.Sprintf("%s (field ownership unreadable, every field compared: %v)", d.text, errNow))
		case owners != nil:
			notCompared = append(notCompared, fmt.Sprintf("%s: now managed by %s, not compared", d.text, joinOwners(owners)))
		default:
			differences = append(differences, d.text)
		}
	}
	return differences, notCompared
}

// takenOver applies Compare's rule to a difference at path: it returns
// the field's live owners when the difference does not count, else nil.
func takenOver(path string, before, now ownership) []owner {
	if !before.known || !now.known {
		return nil
	}
	live := now.owners(path)
	if len(live) == 0 {
		return nil
	}
	owners := make([]owner, len(live))
	scaled := true
	for i, h := range live {
		if kube.IsUpshiftManager(h.manager) {
			return nil
		}
		owners[i] = h.owner
		scaled = scaled && h.subresource == "scale"
	}
	if scaled {
		return owners
	}
	for _, h := range live {
		if before.held(h) {
			return nil
		}
	}
	return owners
}

func joinOwners(owners []owner) string {
	names := make([]string, len(owners))
	for i, o := range owners {
		names[i] = o.String()
	}
	return strings.Join(names, ", ")
}

// difference is one field that differs: its path in Compare's notation,
// and how it is shown.
type difference struct {
	path, text string
}

// comparable is a copy of u without what the server and controllers
// maintain: kube.ServerOwnedMetadata, kube.ControllerAnnotations, status.
func comparable(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := kube.WithoutServerMetadata(u)
	delete(c.Object, "status")
	kube.RemoveControllerAnnotations(c)
	return c
}

// walk compares a and b at path; shownA and shownB are the same trees as
// they may be printed (redacted for Secrets).
func walk(path string, a, b, shownA, shownB any, out *[]difference) {
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		keys := make([]string, 0, len(am)+len(bm))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			av, inA := am[k]
			bv, inB := bm[k]
			p := fieldPath(path, k)
			sa, sb := field(shownA, k), field(shownB, k)
			// A map on one side only is walked against an empty one, so
			// each key it holds is named (and an empty map equals none).
			if _, isMap := bv.(map[string]any); !inA && isMap {
				av, inA = map[string]any{}, true
			}
			if _, isMap := av.(map[string]any); !inB && isMap {
				bv, inB = map[string]any{}, true
			}
			switch {
			case !inA:
				*out = append(*out, difference{p, fmt.Sprintf("%s was <absent> is %s", p, show(sb))})
			case !inB:
				*out = append(*out, difference{p, fmt.Sprintf("%s was %s is <absent>", p, show(sa))})
			default:
				walk(p, av, bv, sa, sb, out)
			}
		}
		return
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aIsList && bIsList {
		for i := 0; i < max(len(al), len(bl)); i++ {
			p := fmt.Sprintf("%s[%d]", path, i)
			sa, sb := item(shownA, i), item(shownB, i)
			switch {
			case i >= len(al):
				*out = append(*out, difference{p, fmt.Sprintf("%s was <absent> is %s", p, show(sb))})
			case i >= len(bl):
				*out = append(*out, difference{p, fmt.Sprintf("%s was %s is <absent>", p, show(sa))})
			default:
				walk(p, al[i], bl[i], sa, sb, out)
			}
		}
		return
	}
	if !sameValue(a, b) {
		*out = append(*out, difference{path, fmt.Sprintf("%s was %s is %s", path, show(shownA), show(shownB))})
	}
}

func isSecret(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

func field(v any, k string) any {
	m, _ := v.(map[string]any)
	return m[k]
}

func item(v any, i int) any {
	l, _ := v.([]any)
	if i < len(l) {
		return l[i]
	}
	return nil
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// fieldPath appends a key: spec.replicas, metadata.labels["app.kubernetes.io/name"].
func fieldPath(path, k string) string {
	if !plainKey.MatchString(k) {
		return fmt.Sprintf("%s[%q]", path, k)
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

// sameValue compares leaves; numbers compare by value, since JSON decoding
// gives int64 or float64 depending on the path taken.
func sameValue(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// show renders a value as JSON, cut to maxShown characters.
func show(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep "<redacted 8 bytes>" readable
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	s := strings.TrimSuffix(b.String(), "\n")
	if len(s) > maxShown {
		s = s[:maxShown] + "…"
	}
	return s
}
