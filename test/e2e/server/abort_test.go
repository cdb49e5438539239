package server_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAbortThenRollBackThroughTheAPI: a hop waiting for its approval is
// aborted through the API (the wizard says so), then rolled back through
// the API in the background: the platform is back at its version and
// the wizard's status says the hop was rolled back.
func TestAbortThenRollBackThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns, catalog, _ := e.platform()
	s := e.serve("--catalog", catalog)
	admin := s.login(adminPassword)
	p := s.startWaiting(admin)
	run := p.Waiting.Run
	var ae apiError
	s.must(http.StatusConflict, "POST", "/api/runs/"+run+"/rollback", admin, nil, &ae)
	if !strings.Contains(ae.Message, "the wizard is driving") {
		t.Errorf("a rollback while the wizard drives: %+v", ae)
	}
	var sum struct{ Phase string }
	s.must(http.StatusOK, "POST", "/api/runs/"+run+"/abort", admin, nil, &sum)
	if sum.Phase != "Aborted" {
		t.Fatalf("after abort the run is %s", sum.Phase)
	}
	p = s.waitFor("/api/linux/upgrade/infra/status", admin, "the wizard to see the abort", func(p progress) bool { return p.Status.State == "Failed" })
	if !strings.Contains(p.Status.Description, "aborted") {
		t.Errorf("status after the abort: %+v", p.Status)
	}
	s.must(http.StatusAccepted, "POST", "/api/runs/"+run+"/rollback", admin, nil, nil)
	p = s.waitFor("/api/linux/upgrade/infra/status", admin, "the rollback", func(p progress) bool {
		return strings.Contains(p.Status.Description, "rolled back, restore verified")
	})
	s.must(http.StatusOK, "GET", "/api/runs/"+run, admin, nil, &struct{ Summary *struct{ Phase string } }{Summary: &sum})
	if sum.Phase != "RolledBack" {
		t.Errorf("run %s is %s after the rollback", run, sum.Phase)
	}
	if _, err := e.cs.AppsV1().Deployments(ns).Get(e.ctx, "web-controller", metaGet); err == nil {
		t.Error("the controller the aborted hop created is still there after the rollback")
	}
	s.must(http.StatusConflict, "POST", "/api/runs/"+run+"/approve", admin, map[string]string{}, &ae)
	if ae.Message == "" {
		t.Error("approving a rolled-back run gave no reason")
	}
}

// TestRollbackCutByAKillIsDrivenOn: a rollback asked through the API is
// under way when the server is killed (a failpoint SIGKILLs it right
// after the rollback's first saved transition); the next server finds
// the command in its state and drives the rollback to its end.
func TestRollbackCutByAKillIsDrivenOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns, catalog, _ := e.platform()
	s := e.serve("--catalog", catalog)
	admin := s.login(adminPassword)
	p := s.startWaiting(admin)
	run := p.Waiting.Run
	var sum struct {
		Phase       string
		Transitions int
	}
	s.must(http.StatusOK, "POST", "/api/runs/"+run+"/abort", admin, nil, &sum)
	s.waitFor("/api/linux/upgrade/infra/status", admin, "the abort", func(p progress) bool { return p.Status.State == "Failed" })
	s.must(http.StatusOK, "GET", "/api/runs/"+run, admin, nil, &struct{ Summary any }{Summary: &sum})
	s.kill()

	s2 := e.serveEnv([]string{"UPSHIFT_TEST_KILL_AFTER_TRANSITION=" + strconv.Itoa(sum.Transitions+1)}, "--catalog", catalog)
	s2.must(http.StatusAccepted, "POST", "/api/runs/"+run+"/rollback", admin, nil, nil)
	select {
	case <-s2.done:
	case <-time.After(time.Minute):
		t.Fatal("the failpoint did not kill the server during the rollback")
	}
	s3 := e.serve("--catalog", catalog)
	p = s3.waitFor("/api/linux/upgrade/infra/status", admin, "the rollback driven on", func(p progress) bool {
		return strings.Contains(p.Status.Description, "rolled back, restore verified")
	})
	s3.must(http.StatusOK, "GET", "/api/runs/"+run, admin, nil, &struct{ Summary any }{Summary: &sum})
	if sum.Phase != "RolledBack" {
		t.Errorf("run %s is %s", run, sum.Phase)
	}
	if _, err := e.cs.AppsV1().Deployments(ns).Get(e.ctx, "web-controller", metaGet); err == nil {
		t.Error("the aborted hop's controller is still there after the rollback was driven on")
	}
	if !strings.Contains(s3.log.String(), "was under way when the server stopped: driving it on") {
		t.Errorf("the new server did not say it drives the rollback on:\n%s", s3.log)
	}
}
