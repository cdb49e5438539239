package apps

import (
	"github.com/distribution/reference"
)

// splitImage parses a container image into its repository as written
// (no registry or library/ added) and its tag; a digest-pinned or
// untagged image has no tag. It is the registry ecosystem's own grammar,
// so "registry:5000/web:1.0" is repository "registry:5000/web", tag "1.0".
func splitImage(image string) (repo, tag string, ok bool) {
	ref, err := reference.Parse(image)
	if err != nil {
		return "", "", false
	}
	named, isNamed := ref.(reference.Named)
	if !isNamed {
		return "", "", false
	}
	if t, isTagged := ref.(reference.Tagged); isTagged {
		tag = t.Tag()
	}
	return named.Name(), tag, true
}

// repositoryOf is the repository a rollout's new image is in: spec.image,
// or the one the Deployment's container runs.
func repositoryOf(specImage, running string) string {
	if specImage != "" {
		return specImage
	}
	repo, _, _ := splitImage(running)
	return repo
}

// runningVersion is the tag the container runs when it is of repo ("" when
// it runs another repository, or no tag).
func runningVersion(repo, running string) string {
	r, tag, ok := splitImage(running)
	if !ok || r != repo {
		return ""
	}
	return tag
}
