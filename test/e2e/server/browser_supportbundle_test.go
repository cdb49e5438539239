package server_test

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/server/web/browsertest"
)

const infraSupportBundle = "/api/linux/upgrade/infra/support-bundle"

// checkSupportBundle: once the infrastructure phase ended, its section
// shows the support bundle infra/status carries, its size (the UI's
// KB) and file count; the admin's click on the link saves a .tar.gz
// whose bytes are GET infra/support-bundle's and which untars into as
// many files, the runs' among them; a viewer sees the text, no link.
func checkSupportBundle(t *testing.T, e *env, s *server, u *ui, run string) {
	testID := browsertest.TestID
	token := s.login(adminPassword)
	var st progress
	s.must(http.StatusOK, "GET", "/api/linux/upgrade/infra/status", token, nil, &st)
	sb := st.SupportBundle
	if sb == nil || sb.URL != infraSupportBundle || sb.Error != "" || sb.Files == 0 {
		t.Fatalf("infra/status's support bundle at the phase's end: %+v", sb)
	}
	size := fmt.Sprintf("Support bundle (%d KB, created ", max(1, int(math.Round(float64(sb.Bytes)/1024))))
	u.until("the support bundle section", visible(testID("support-bundle-link")))
	if l := u.text(testID("support-bundle-link")); !strings.HasPrefix(l, size) {
		t.Errorf("the link reads %q, want %q… (%d bytes)", l, size, sb.Bytes)
	}
	files := fmt.Sprintf("%d file(s)", sb.Files)
	if d := u.text(testID("support-bundle-detail")); !strings.Contains(d, files) {
		t.Errorf("the bundle's detail reads %q, want %q", d, files)
	}

	name, saved := downloadLink(t, u, testID("support-bundle-link"))
	code, served := s.call("GET", infraSupportBundle, token, nil)
	if code != http.StatusOK || !bytes.Equal(saved, served) {
		t.Errorf("the saved bundle (%d bytes) is not GET infra/support-bundle's (%d: %d bytes)", len(saved), code, len(served))
	}
	if name != sb.Name || !strings.HasSuffix(name, ".tar.gz") {
		t.Errorf("the bundle saved as %q, want infra/status's name %q", name, sb.Name)
	}
	t.Logf("saved %s: %d bytes", name, len(saved))
	untarred := testenv.Untar(t, saved)
	if len(untarred) != sb.Files || untarred["summary.txt"] == "" || untarred["runs/"+run+".yaml"] == "" {
		t.Errorf("the saved bundle holds %d files (want %d, summary.txt and runs/%s.yaml among them)", len(untarred), sb.Files, run)
	}
	u.accessible("the support bundle")

	viewerSupportBundle(t, e, s, strings.TrimSuffix(size, ", created "))
}

// downloadLink clicks the link sel selects and answers the name the
// browser saved the file under and its bytes: Chromium saves downloads
// in a directory of the test's and says when one completed.
func downloadLink(t *testing.T, u *ui, sel string) (string, []byte) {
	dir := t.TempDir()
	type saved struct{ guid, name string }
	begun := make(chan saved, 1)
	done := make(chan browser.DownloadProgressState, 1)
	// The listener outlives the call: it never blocks.
	chromedp.ListenTarget(u.b.Ctx, func(ev any) {
		switch ev := ev.(type) {
		case *browser.EventDownloadWillBegin:
			select {
			case begun <- saved{ev.GUID, ev.SuggestedFilename}:
			default:
			}
		case *browser.EventDownloadProgress:
			if ev.State != browser.DownloadProgressStateInProgress {
				select {
				case done <- ev.State:
				default:
				}
			}
		}
	})
	u.do(browser.SetDownloadBehavior(browser.SetDownloadBehaviorBehaviorAllowAndName).WithDownloadPath(dir).WithEventsEnabled(true))
	u.click(sel)
	timeout := time.After(time.Minute)
	var file saved
	select {
	case file = <-begun:
	case <-timeout:
		u.fail("clicking %s began no download in a minute", sel)
	}
	select {
	case st := <-done:
		if st != browser.DownloadProgressStateCompleted {
			u.fail("the download of %s ended %s", file.name, st)
		}
	case <-timeout:
		u.fail("the download of %s did not end in a minute", file.name)
	}
	data, err := os.ReadFile(filepath.Join(dir, file.guid))
	if err != nil {
		t.Fatal(err)
	}
	return file.name, data
}

// viewerSupportBundle: a viewer's wizard, at the ended infrastructure
// phase, shows the bundle's text (its size, size) and no link.
func viewerSupportBundle(t *testing.T, e *env, s *server, size string) {
	testID := browsertest.TestID
	v := e.browser(s)
	v.do(chromedp.Navigate(s.url+"/"), chromedp.WaitVisible(browsertest.LoginPassword, chromedp.ByQuery),
		chromedp.SendKeys(browsertest.LoginPassword, viewerPassword, chromedp.ByQuery))
	v.click(testID("login-submit"))
	v.until("signed in as a viewer", `document.querySelector('[data-testid="session-role"]')?.textContent === 'Signed in as viewer'`)
	v.step("infra")
	v.until("the viewer's support bundle text", visible(testID("support-bundle-text")))
	if txt := v.text(testID("support-bundle-text")); !strings.HasPrefix(txt, size) || !strings.HasSuffix(txt, ": an admin can download it.") {
		t.Errorf("a viewer's support bundle text: %q, want %q…: an admin can download it.", txt, size)
	}
	var links int
	v.eval(`document.querySelectorAll('[data-testid="support-bundle-link"], [data-testid="support-bundle"] a').length`, &links)
	if links != 0 {
		t.Errorf("a viewer's support bundle section has %d links, want none", links)
	}
	v.accessible("a viewer's support bundle")
	v.shot("support-bundle-viewer", testID("support-bundle"))
	v.checkProblems()
}
