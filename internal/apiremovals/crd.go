package apiremovals

import (
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// StoredVersionDrop is a version that a live CRD's status.storedVersions
// lists and the CRD a plan applies drops from spec.versions: objects may
// be stored in it, and the API server refuses the update until they are
// migrated and the version is taken out of storedVersions.
type StoredVersionDrop struct {
	CRD string // metadata.name: widgets.example.com
	// Resource names the CRD's objects for kubectl (plural.group).
	Resource string
	// Version is the version dropped.
	Version string
	// LiveStorage and NextStorage are the storage versions of the live
	// CRD and of the one applied.
	LiveStorage, NextStorage string
	// Remaining is status.storedVersions once the migration is done.
	Remaining []string
	// Objects counts the CRD's objects (what a migration rewrites); -1
	// when they could not be counted, CountErr then says why.
	Objects  int
	CountErr error
}

// DroppedStoredVersions compares the CRD a plan applies (next) with the
// live one: every version of the live status.storedVersions that next's
// spec.versions does not list, in storedVersions order. A changed storage
// version is no drop as long as the old one stays listed. Objects is left
// for the caller to count.
func DroppedStoredVersions(live, next *unstructured.Unstructured) []StoredVersionDrop {
	stored, _, _ := unstructured.NestedStringSlice(live.Object, "status", "storedVersions")
	keeps := map[string]bool{}
	for _, v := range versions(next) {
		keeps[v.name] = true
	}
	var dropped []string
	for _, v := range stored {
		if !keeps[v] {
			dropped = append(dropped, v)
		}
	}
	if len(dropped) == 0 {
		return nil
	}
	liveStorage, nextStorage := StorageVersion(live), StorageVersion(next)
	var remaining []string
	for _, v := range stored {
		if !slices.Contains(dropped, v) {
			remaining = append(remaining, v)
		}
	}
	// Dropping the live storage version goes through a CRD that stores
	// the new one first: that one is then stored too.
	if slices.Contains(dropped, liveStorage) && nextStorage != "" && !slices.Contains(remaining, nextStorage) {
		remaining = append(remaining, nextStorage)
	}
	plural, _, _ := unstructured.NestedString(live.Object, "spec", "names", "plural")
	group, _, _ := unstructured.NestedString(live.Object, "spec", "group")
	out := make([]StoredVersionDrop, 0, len(dropped))
	for _, v := range dropped {
		out = append(out, StoredVersionDrop{CRD: live.GetName(), Resource: plural + "." + group, Version: v,
			LiveStorage: liveStorage, NextStorage: nextStorage, Remaining: remaining, Objects: -1})
	}
	return out
}

// String is the problem and its fix, for a preflight message.
func (d StoredVersionDrop) String() string {
	s := fmt.Sprintf("status.storedVersions of CustomResourceDefinition %s lists %s, which this CRD drops from spec.versions: objects may still be stored as %s (%s), and the API server refuses the update (\"missing from spec.versions\"). Fix: ",
		d.CRD, d.Version, d.Version, d.count())
	target := d.LiveStorage
	if d.Version == d.LiveStorage {
		// Objects are written as the version dropped: they can be
		// rewritten only once another version is the storage one.
		target = d.NextStorage
		if target == "" {
			target = "a version the new CRD keeps"
		}
		s += fmt.Sprintf("%s is the storage version now, so first apply the CRD with %s as the storage version and %s still in spec.versions (an earlier stage), then ", d.Version, target, d.Version)
	}
	if d.Objects != 0 || d.Version == d.LiveStorage {
		s += fmt.Sprintf("migrate the stored objects to %s (rewrite each object, e.g. with kube-storage-version-migrator or `kubectl get %s -A -o json | kubectl replace -f -`), then ", target, d.Resource)
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"storedVersions": d.Remaining}}) // strings: cannot fail
	s += fmt.Sprintf("remove %s from the CRD's status.storedVersions (`kubectl patch crd %s --subresource=status --type=merge -p '%s'`); or keep %s in spec.versions with served: false",
		d.Version, d.CRD, patch, d.Version)
	return s
}

func (d StoredVersionDrop) count() string {
	switch {
	case d.Objects < 0 && d.CountErr != nil:
		return "could not count its objects: " + d.CountErr.Error()
	case d.Objects < 0:
		return "its objects were not counted"
	case d.Objects == 0:
		return "no " + d.Resource + " exist, so nothing needs rewriting"
	case d.Objects == 1:
		return "1 " + d.Resource + " exists"
	}
	return fmt.Sprintf("%d %s exist", d.Objects, d.Resource)
}

// StorageVersion is the version a CRD stores its objects as; "" when no
// version is marked storage.
func StorageVersion(crd *unstructured.Unstructured) string {
	for _, v := range versions(crd) {
		if v.storage {
			return v.name
		}
	}
	return ""
}

// ServedVersion is a version to read a CRD's objects in: its storage
// version when served, else the first served one; "" when none is.
func ServedVersion(crd *unstructured.Unstructured) string {
	first := ""
	for _, v := range versions(crd) {
		if !v.served {
			continue
		}
		if v.storage {
			return v.name
		}
		if first == "" {
			first = v.name
		}
	}
	return first
}

type crdVersion struct {
	name            string
	served, storage bool
}

// versions reads spec.versions in place: converting a whole CRD, its
// schemas included, costs far more than the few fields needed.
func versions(crd *unstructured.Unstructured) []crdVersion {
	list, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	out := make([]crdVersion, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		served, _ := m["served"].(bool)
		storage, _ := m["storage"].(bool)
		out = append(out, crdVersion{name: name, served: served, storage: storage})
	}
	return out
}
