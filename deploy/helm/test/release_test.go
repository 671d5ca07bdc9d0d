package helmtest

import (
	"os"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// TestReleasedChart checks a packaged chart from scripts/release.sh:
// KPROXY_RELEASE_CHART names the .tgz, KPROXY_RELEASE_VERSION the release
// version (scripts/release-check.sh sets both). Its version and appVersion
// are the release's, and both modes render with the release's image tag.
func TestReleasedChart(t *testing.T) {
	path, version := os.Getenv("KPROXY_RELEASE_CHART"), os.Getenv("KPROXY_RELEASE_VERSION")
	if path == "" || version == "" {
		t.Skip("KPROXY_RELEASE_CHART and KPROXY_RELEASE_VERSION name a packaged chart and its version (scripts/release-check.sh)")
	}
	c, err := loader.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	if c.Metadata.Version != version || c.Metadata.AppVersion != version {
		t.Errorf("%s: version %q, appVersion %q; want both %q", path, c.Metadata.Version, c.Metadata.AppVersion, version)
	}
	for _, mode := range []string{"gateway", "sidecar"} {
		objs := renderChart(t, c, upstreamValues, "mode: "+mode+"\n")
		var images []string
		for _, d := range objs.deployments {
			spec := d.Spec.Template.Spec
			for _, ctr := range slices.Concat(spec.InitContainers, spec.Containers) {
				if isKproxy(ctr) {
					images = append(images, ctr.Image)
				}
			}
		}
		if len(images) == 0 {
			t.Errorf("%s mode renders no kproxy container: %v", mode, objs.kinds)
		}
		for _, image := range images {
			if tag := imageTag(image); tag != version {
				t.Errorf("%s mode: kproxy image %q has tag %q, want the release version %q", mode, image, tag, version)
			}
		}
		t.Logf("%s mode: kproxy image %v", mode, images)
	}
}

// imageTag is the tag of an image reference (repository[:tag]).
func imageTag(image string) string {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	return image[i+1:]
}
