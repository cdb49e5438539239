package plan

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

func dur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

// The numbers of an http gate: a status code, positive durations, and an
// interval that leaves the gate time for a second request.
func TestHTTPGateRules(t *testing.T) {
	const url = "http://127.0.0.1:9000/healthz"
	for _, tc := range []struct {
		name string
		gate v1alpha1.Gate
		want []string // exact problems, in order
	}{
		{name: "defaults only", gate: v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: url}}},
		{name: "lowest status code", gate: v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: url, ExpectStatus: 100}}},
		{name: "highest status code", gate: v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: url, ExpectStatus: 599}}},
		{name: "status below 100", gate: v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: url, ExpectStatus: 99}},
			want: []string{"g.http.expectStatus: Invalid value: 99: must be an HTTP status code (100-599)"}},
		{name: "status above 599", gate: v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: url, ExpectStatus: 600}},
			want: []string{"g.http.expectStatus: Invalid value: 600: must be an HTTP status code (100-599)"}},
		{name: "negative status", gate: v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: url, ExpectStatus: -200}},
			want: []string{"g.http.expectStatus: Invalid value: -200: must be an HTTP status code (100-599)"}},
		{name: "zero and negative durations", gate: v1alpha1.Gate{Timeout: dur(0), HTTP: &v1alpha1.HTTPGate{URL: url, Timeout: dur(-time.Second), Interval: dur(0)}},
			want: []string{
				`g.timeout: Invalid value: "0s": must be a positive duration such as 30s or 5m`,
				`g.http.timeout: Invalid value: "-1s": must be a positive duration such as 30s or 5m`,
				`g.http.interval: Invalid value: "0s": must be a positive duration such as 30s or 5m`,
			}},
		{name: "interval equal to the http timeout", gate: v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: url, Timeout: dur(10 * time.Second), Interval: dur(10 * time.Second)}}},
		{name: "interval over the http timeout", gate: v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: url, Timeout: dur(10 * time.Second), Interval: dur(11 * time.Second)}},
			want: []string{`g.http.interval: Invalid value: "11s": must not exceed the gate's timeout (10s, g.http.timeout): the gate would make one request and fail; shorten the interval or lengthen the timeout`}},
		{name: "the http timeout wins over the gate's", gate: v1alpha1.Gate{Timeout: dur(time.Hour), HTTP: &v1alpha1.HTTPGate{URL: url, Timeout: dur(10 * time.Second), Interval: dur(time.Minute)}},
			want: []string{`g.http.interval: Invalid value: "1m0s": must not exceed the gate's timeout (10s, g.http.timeout): the gate would make one request and fail; shorten the interval or lengthen the timeout`}},
		{name: "interval under the gate timeout", gate: v1alpha1.Gate{Timeout: dur(10 * time.Minute), HTTP: &v1alpha1.HTTPGate{URL: url, Interval: dur(5 * time.Minute)}}},
		{name: "interval over the gate timeout", gate: v1alpha1.Gate{Timeout: dur(30 * time.Second), HTTP: &v1alpha1.HTTPGate{URL: url, Interval: dur(time.Minute)}},
			want: []string{`g.http.interval: Invalid value: "1m0s": must not exceed the gate's timeout (30s, g.timeout): the gate would make one request and fail; shorten the interval or lengthen the timeout`}},
		{name: "interval over the default timeout", gate: v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: url, Interval: dur(3 * time.Minute)}},
			want: []string{`g.http.interval: Invalid value: "3m0s": must not exceed the gate's timeout (2m0s, the default): the gate would make one request and fail; shorten the interval or lengthen the timeout`}},
		{name: "a bad timeout is reported once, not compared", gate: v1alpha1.Gate{Timeout: dur(-time.Minute), HTTP: &v1alpha1.HTTPGate{URL: url, Interval: dur(time.Minute)}},
			want: []string{`g.timeout: Invalid value: "-1m0s": must be a positive duration such as 30s or 5m`}},
		{name: "a bad URL does not hide the interval", gate: v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: "127.0.0.1/healthz", Timeout: dur(time.Second), Interval: dur(time.Minute)}},
			want: []string{
				`g.http.url: Invalid value: "127.0.0.1/healthz": must be an absolute http(s) URL`,
				`g.http.interval: Invalid value: "1m0s": must not exceed the gate's timeout (1s, g.http.timeout): the gate would make one request and fail; shorten the interval or lengthen the timeout`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range validateGate(field.NewPath("g"), tc.gate) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}
