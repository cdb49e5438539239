package kube

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestTail(t *testing.T) {
	many := make([]string, 30)
	for i := range many {
		many[i] = strings.Repeat("x", 10) + string(rune('a'+i%26))
	}
	tests := []struct {
		name     string
		text     string
		maxLines int
		maxBytes int
		want     []string
	}{
		{name: "empty", text: "", maxLines: 20, maxBytes: 100, want: nil},
		{name: "only newlines", text: "\n\n", maxLines: 20, maxBytes: 100, want: nil},
		{name: "short", text: "one\r\ntwo\n", maxLines: 20, maxBytes: 100, want: []string{"one", "two"}},
		{name: "last lines", text: strings.Join(many, "\n"), maxLines: 2, maxBytes: 100, want: many[28:]},
		{name: "bytes drop leading lines", text: "aaaa\nbbbb\ncccc\n", maxLines: 20, maxBytes: 9, want: []string{"bbbb", "cccc"}},
		{name: "one long line keeps its end", text: "0123456789abcdef", maxLines: 20, maxBytes: 8, want: []string{"…bcdef"}},
		{name: "cut inside a rune", text: "ééééé", maxLines: 20, maxBytes: 6, want: []string{"…é"}},
		{name: "invalid UTF-8", text: "ok \xff\n", maxLines: 20, maxBytes: 100, want: []string{"ok ?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tail(tt.text, tt.maxLines, tt.maxBytes)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tail (-want +got):\n%s", diff)
			}
			if n := len(strings.Join(got, "\n")); n > tt.maxBytes {
				t.Errorf("tail is %d bytes, more than %d", n, tt.maxBytes)
			}
		})
	}
}

func TestMaskEnv(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "wait", Env: []corev1.EnvVar{{Name: "DB_HOST", Value: "db.internal"}}}},
		Containers: []corev1.Container{{Name: "migrate", Env: []corev1.EnvVar{
			{Name: "DB_URL", Value: "postgres://app:hunter22@db.internal/app"},
			{Name: "LEVEL", Value: "info"}, // too short to mask
			{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "token"}}},
		}}},
	}}
	got := maskEnv("connect postgres://app:hunter22@db.internal/app failed\nlevel=info host=db.internal\n", pod)
	want := "connect xxxxx failed\nlevel=info host=xxxxx\n"
	if got != want {
		t.Errorf("maskEnv = %q, want %q", got, want)
	}
}

func TestWithLogs(t *testing.T) {
	failing := Health{Message: "deployment a/web: pod a/web-1 container web: CrashLoopBackOff", Logs: &ContainerRef{Namespace: "a", Pod: "web-1", Container: "web", Previous: true}}
	logs := func(lines []string, err error) LogTail {
		return func(context.Context, ContainerRef) ([]string, error) { return lines, err }
	}
	tests := []struct {
		name string
		h    Health
		logs LogTail
		want string
	}{
		{"lines", failing, logs([]string{"panic: no db", "exit 1"}, nil), "\nlast log lines of pod a/web-1 container web:\n  panic: no db\n  exit 1"},
		{"nothing logged", failing, logs(nil, nil), "\npod a/web-1 container web logged nothing"},
		{"forbidden", failing, logs(nil, apierrors.NewForbidden(corev1.Resource("pods/log"), "web-1", nil)), "may not get pods/log in a; grant it"},
		{"no container to read", Health{Message: "x"}, logs([]string{"y"}, nil), ""},
		{"no reader", failing, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WithLogs(context.Background(), tt.logs, tt.h)
			added := strings.TrimPrefix(got.Message, tt.h.Message)
			if tt.want == "" && added != "" || !strings.Contains(added, tt.want) {
				t.Errorf("added %q, want %q", added, tt.want)
			}
		})
	}
}
