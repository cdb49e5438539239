package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/upshift-dev/upshift/internal/fuzzcheck"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/versions"
)

// catalogSeeds are the catalogs this repository ships, and the plan
// templates beside them.
func catalogSeeds(f *testing.F, name string) [][]byte {
	files, _ := filepath.Glob("../../examples/*/" + name)
	more, _ := filepath.Glob("testdata/*/" + name)
	var out [][]byte
	for _, file := range append(files, more...) {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		f.Fatalf("no %s found for the seed corpus", name)
	}
	return out
}

// FuzzCatalog decodes and validates catalog files as Open does. A refused
// catalog says where; every validation error names its field; and a
// catalog Validate accepts is one the path solver can read: Releases
// parses every version and constraint, and a path between any two of its
// releases is found or refused with a reason.
func FuzzCatalog(f *testing.F) {
	for _, b := range catalogSeeds(f, FileName) {
		f.Add(b, uint8(0), uint8(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, from, to uint8) {
		if len(b) > 16<<10 {
			return
		}
		defer fuzzcheck.Within("a catalog's decode and validation", b)()
		var doc ReleaseCatalog
		if err := plan.DecodeStrict("catalog.yaml", Kind, b, &doc); err != nil {
			var de *plan.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("a refused catalog is %T, not a *plan.DecodeError: %v", err, err)
			}
			return
		}
		errs := Validate(&doc)
		for _, e := range errs {
			if e.Field == "" || !strings.HasPrefix(e.Error(), e.Field+": ") {
				t.Fatalf("a validation error without its field: %q", e)
			}
		}
		if len(errs) > 0 {
			return
		}
		rels, err := doc.Releases()
		if err != nil {
			t.Fatalf("Validate accepted a catalog whose releases do not parse: %v", err)
		}
		sortReleases(rels)
		cur, tgt := rels[int(from)%len(rels)].Version, rels[int(to)%len(rels)].Version
		path, err := versions.Path(rels, versions.Request{Current: cur, Target: tgt, Kubernetes: semver.MustParse("1.31.0")})
		if err == nil && len(path) > 0 && !path[len(path)-1].Version.Equal(tgt) {
			t.Fatalf("a path from %s to %s ends at %s", cur, tgt, path[len(path)-1].Version)
		}
	})
}

func sortReleases(rels []versions.Release) {
	for i := 1; i < len(rels); i++ {
		for j := i; j > 0 && rels[j].Version.LessThan(rels[j-1].Version); j-- {
			rels[j], rels[j-1] = rels[j-1], rels[j]
		}
	}
}

// unboundedTemplate are what makes a template's work unbounded by its
// length: loops inside loops (range over an int or a list each pass
// builds), sprig's functions that allocate a count they are given, and
// its key generators and password hashes (seconds each). A catalog's
// author chooses its template as they choose its plans; the fuzzer
// leaves these out so an input's time stays bounded by its size.
var unboundedTemplate = []string{"repeat", "until", "seq", "gen", "derive", "bcrypt", "htpasswd", "randBytes", "randAlpha", "randNumeric", "randAscii", "randAlphaNum", "shuffle"}

// FuzzPlanTemplate renders plan templates as PlanFor does, with fuzzed
// versions and values (what a driver passes with --set or an API body's
// values), then decodes the plan. Rendering fails with an error or makes
// a plan that Decode accepts or refuses with a *plan.DecodeError.
func FuzzPlanTemplate(f *testing.F) {
	for _, b := range catalogSeeds(f, "plan.yaml.tmpl") {
		f.Add(string(b), "1.2.3", "v1.1.0", "true")
	}
	f.Add(`{{ .Values.x | quote }}`, "1.0.0", "", "a\nb: c")
	f.Fuzz(func(t *testing.T, tmpl, version, from, value string) {
		if len(tmpl) > 8<<10 || len(value) > 1<<10 || strings.Count(tmpl, "range") > 1 {
			return
		}
		for _, fn := range unboundedTemplate {
			if strings.Contains(tmpl, fn) {
				return
			}
		}
		v, err := semver.NewVersion(version)
		if err != nil {
			return
		}
		defer fuzzcheck.Within("a plan template's rendering", []byte(tmpl))()
		data := TemplateData{Version: v.String(), Tag: version, Major: v.Major(), Minor: v.Minor(), Patch: v.Patch(), Catalog: "fuzz",
			Values: map[string]string{"x": value, "airgap": value, "ha": value, "disasterRecovery": value, "manifestsURL": value, "soak": value,
				"rootHost": value, "registry": value, "installerImage": value, "bundleName": value}}
		if fv, err := semver.NewVersion(from); err == nil {
			data.From, data.FromTag = fv.String(), from
		}
		out, err := render("plan.yaml.tmpl", []byte(tmpl), data)
		if err != nil {
			return
		}
		if _, err := plan.Decode("rendered", out, ""); err != nil {
			var de *plan.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("a rendered plan refused with %T, not a *plan.DecodeError: %v", err, err)
			}
		}
	})
}
