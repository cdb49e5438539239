package cli

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/report"
	"github.com/upshift-dev/upshift/internal/upgrade"
)

// writeReport writes the upgrade's report to --report: Markdown, or JSON
// for a .json file. It covers the whole path to --to, the hops not run
// included, which the runs' records alone could not tell.
func (o *upgradeOutput) writeReport(res *upgrade.Result) error {
	if o.reportFile == "" || len(res.Hops) == 0 {
		return nil
	}
	runs := make([]*v1alpha1.UpgradeRun, len(res.Hops))
	for i, h := range res.Hops {
		runs[i] = h.Run
	}
	up := report.BuildUpgradeFor(reportRequest(o.target, res), runs...)
	var b []byte
	if strings.HasSuffix(o.reportFile, ".json") {
		var buf bytes.Buffer
		if err := printObject(&buf, up, "json"); err != nil {
			return err
		}
		b = buf.Bytes()
	} else {
		b = []byte(redact.Text(report.UpgradeMarkdown(up, reportCommand)))
	}
	if err := os.WriteFile(o.reportFile, b, 0o644); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	return nil
}

// reportRequest is --to and the path solved for it, as the report
// shows them: the versions as the catalog's releases write them.
func reportRequest(target string, res *upgrade.Result) report.Request {
	req := report.Request{Target: target, Path: res.Planned()}
	if v, err := semver.NewVersion(target); err == nil {
		req.Target = v.String()
	}
	if res.Solution != nil {
		req.From = upgrade.VersionString(res.Solution.From)
	}
	return req
}
