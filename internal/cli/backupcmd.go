package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/redact"
)

func newBackupCommand(kf *kubeFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "List and show the backups taken before each stage",
	}
	cmd.AddCommand(newBackupListCommand(kf), newBackupShowCommand(kf))
	return cmd
}

func newBackupListCommand(kf *kubeFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List backups: run, stage, attempt, objects, size",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sess, err := openSession(kf)
			if err != nil {
				return err
			}
			infos, err := sess.Backups().List(cmd.Context())
			if err != nil {
				return err
			}
			if output != "" {
				return printObject(cmd.OutOrStdout(), infos, output)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tSTAGE\tATTEMPT\tOBJECTS\tSECRETS\tBYTES\tCREATED")
			for _, i := range infos {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", i.Key.Run, i.Key.Stage, i.Key.Attempt, i.Objects, len(i.Secrets), i.Bytes, i.CreatedAt.UTC().Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml")
	return cmd
}

func newBackupShowCommand(kf *kubeFlags) *cobra.Command {
	var output, stage string
	var ref runRef
	cmd := &cobra.Command{
		Use:   "show RUN [--stage STAGE] [-n NAMESPACE]",
		Short: "Show the objects a run's backups hold (Secret values redacted)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sess, err := openSession(kf)
			if err != nil {
				return err
			}
			name, err := ref.resolve(cmd.Context(), sess, args[0])
			if err != nil {
				return err
			}
			run, err := sess.Store().Get(cmd.Context(), name)
			if err != nil {
				return fmt.Errorf("run %s: %w", name, err)
			}
			type shown struct {
				Stage   string                       `json:"stage"`
				Secrets []string                     `json:"secrets"`
				Objects []*unstructured.Unstructured `json:"objects"`
				Absent  []string                     `json:"absent,omitempty"`
			}
			var all []shown
			for _, ss := range run.Status.Stages {
				if ss.Backup == nil || (stage != "" && ss.Name != stage) {
					continue
				}
				snap, err := sess.Backups().Load(cmd.Context(), *ss.Backup)
				if err != nil {
					return fmt.Errorf("stage %s: %w", ss.Name, err)
				}
				s := shown{Stage: ss.Name, Secrets: ss.Backup.Secrets}
				for _, e := range snap.Entries {
					if e.Object == nil {
						s.Absent = append(s.Absent, e.Ref.String())
						continue
					}
					s.Objects = append(s.Objects, redact.Object(e.Object))
				}
				all = append(all, s)
			}
			if output == "" {
				output = "yaml"
			}
			return printObject(cmd.OutOrStdout(), all, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml (default yaml)")
	cmd.Flags().StringVar(&stage, "stage", "", "only this stage")
	ref.add(cmd)
	return cmd
}
