package plan

import (
	"fmt"
	"sort"

	// The reference grammar of the registry ecosystem itself (the one
	// container runtimes parse image names with), rather than a regexp of
	// our own that could drift from it.
	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

var workloadKinds = map[string]bool{"Deployment": true, "DaemonSet": true, "StatefulSet": true}

const imageHint = "write it as [registry/]repository[:tag][@digest], e.g. example.com/team/app:1.2.3"

func validateImage(path *field.Path, s *v1alpha1.ImageStep) field.ErrorList {
	var errs field.ErrorList
	if !workloadKinds[s.Kind] {
		errs = append(errs, field.NotSupported(path.Child("kind"), s.Kind, []string{"Deployment", "DaemonSet", "StatefulSet"}))
	}
	if s.Namespace == "" {
		errs = append(errs, field.Required(path.Child("namespace"), "the workload's namespace"))
	}
	if s.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "the workload's name"))
	}
	images := path.Child("images")
	if len(s.Images) == 0 {
		errs = append(errs, field.Required(images, "at least one container is required (container name: image)"))
	}
	// Sorted, so the same plan always gets the same messages in the same order.
	containers := make([]string, 0, len(s.Images))
	for c := range s.Images {
		containers = append(containers, c)
	}
	sort.Strings(containers)
	for _, c := range containers {
		img := s.Images[c]
		if c == "" {
			errs = append(errs, field.Invalid(images, img, "this image has an empty container name: key each image by its container's name (container name: image), e.g. manager: example.com/team/app:1.2.3"))
			continue
		}
		if img == "" {
			errs = append(errs, field.Required(images.Key(c), "an image is required"))
		} else if err := imageReferenceError(img); err != nil {
			errs = append(errs, field.Invalid(images.Key(c), img, err.Error()))
		}
	}
	return errs
}

// imageReferenceError says why img is not an image reference a container
// runtime can pull, or returns nil. Short names are fine: nginx:1.27 means
// docker.io/library/nginx:1.27, as it does for a kubelet.
func imageReferenceError(img string) error {
	if _, err := reference.ParseNormalizedNamed(img); err != nil {
		return fmt.Errorf("not a valid image reference (%v): %s", err, imageHint)
	}
	return nil
}
