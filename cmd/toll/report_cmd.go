package main

import (
	"github.com/spf13/cobra"

	"github.com/tollperf/toll/record"
)

func newReportCmd() *cobra.Command {
	var excludeFlagged bool
	var push string
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Analyse a results directory again and rewrite its reports",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := record.Open(args[0])
			if err != nil {
				return &exitError{exitUsage, err}
			}
			if _, err := renderDir(cmd.Context(), cmd.OutOrStdout(), dir, excludeFlagged, push); err != nil {
				return &exitError{exitFailure, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&push, "push", "", "also push the summary's metrics to this Prometheus Pushgateway URL")
	cmd.Flags().BoolVar(&excludeFlagged, "exclude-flagged", false, "leave flagged trials out of the comparison (they are still shown)")
	return cmd
}
