package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/apps"
	"github.com/upshift-dev/upshift/internal/controller"
)

// appFlags are what every `upshift app` command shares: the namespace.
type appFlags struct {
	kf        *kubeFlags
	namespace string
}

func newAppCommand(kf *kubeFlags) *cobra.Command {
	af := &appFlags{kf: kf}
	cmd := &cobra.Command{
		Use:   "app",
		Short: "Look at and steer AppRollouts (the controller rolls them)",
		Long: `Look at and steer AppRollouts, which the controller (upshift controller)
rolls out: get shows them; promote, abort and retry set the rollout's action
annotations, as kubectl annotate would; pause and resume set spec.paused.
See docs/apps.md.`,
	}
	cmd.PersistentFlags().StringVarP(&af.namespace, "namespace", "n", "", "the rollouts' namespace (default: the kubeconfig context's)")
	cmd.AddCommand(newAppGetCommand(af),
		newAppActionCommand(af, apps.RequestPromote, "End the pause of the canary step the rollout holds (annotation "+v1alpha1.AnnotationPromote+")"),
		newAppActionCommand(af, apps.RequestAbort, "Fail the rollout and roll it back to the Deployment as captured (annotation "+v1alpha1.AnnotationAbort+")"),
		newAppActionCommand(af, apps.RequestRetry, "Start a rolled-back version again, or roll a failed rollback back again (annotation "+v1alpha1.AnnotationRetry+")"),
		newAppActionCommand(af, apps.RequestPause, "Set spec.paused to true: the rollout stops at the step it is at"),
		newAppActionCommand(af, apps.RequestResume, "Set spec.paused to false: the rollout goes on from there"))
	return cmd
}

// client is a typed client of the cluster and the namespace to use.
func (af *appFlags) client() (client.Client, string, error) {
	cfg, err := af.kf.restConfig()
	if err != nil {
		return nil, "", err
	}
	s, err := controller.Scheme()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, "", err
	}
	ns := af.namespace
	if ns == "" {
		if ns, _, err = af.kf.cf.ToRawKubeConfigLoader().Namespace(); err != nil {
			return nil, "", err
		}
	}
	return c, ns, nil
}

func newAppGetCommand(af *appFlags) *cobra.Command {
	var output string
	var all bool
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "List AppRollouts, or show one with its steps",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return fmt.Errorf("--output %q: use json or yaml, or leave it out for a table", output)
			}
			c, ns, err := af.client()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				a := &v1alpha1.AppRollout{}
				if err := c.Get(cmd.Context(), types.NamespacedName{Namespace: ns, Name: args[0]}, a); err != nil {
					return err
				}
				return printOut(cmd, output, a, func() { printApp(cmd.OutOrStdout(), a, time.Now()) })
			}
			list := &v1alpha1.AppRolloutList{}
			opts := []client.ListOption{}
			if !all {
				opts = append(opts, client.InNamespace(ns))
			}
			if err := c.List(cmd.Context(), list, opts...); err != nil {
				return err
			}
			return printOut(cmd, output, list, func() { printAppList(cmd.OutOrStdout(), list.Items, all, time.Now()) })
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml (default: a table)")
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the rollouts of every namespace")
	return cmd
}

// printOut prints obj as json or yaml, or calls table.
func printOut(cmd *cobra.Command, output string, obj any, table func()) error {
	switch output {
	case "json":
		b, err := json.MarshalIndent(obj, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(cmd.OutOrStdout(), string(b))
		return err
	case "yaml":
		b, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = cmd.OutOrStdout().Write(b)
		return err
	}
	table()
	return nil
}

// newAppActionCommand asks for an action (apps.Patch: an annotation set
// to the time now, or spec.paused).
func newAppActionCommand(af *appFlags, act apps.Request, short string) *cobra.Command {
	return &cobra.Command{
		Use:   string(act) + " NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			patch, err := apps.Patch(act, time.Now(), "")
			if err != nil {
				return err
			}
			return patchApp(cmd, af, args[0], patch, fmt.Sprintf("approllout/%s: %s requested", args[0], act))
		},
	}
}

// patchApp merge-patches the rollout and prints done.
func patchApp(cmd *cobra.Command, af *appFlags, name string, b []byte, done string) error {
	c, ns, err := af.client()
	if err != nil {
		return err
	}
	a := &v1alpha1.AppRollout{}
	a.Namespace, a.Name = ns, name
	if err := c.Patch(cmd.Context(), a, client.RawPatch(types.MergePatchType, b)); err != nil {
		return err
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), done)
	return err
}
