package main

import (
	"github.com/spf13/cobra"

	"github.com/tollperf/toll/record"
)

func newReportCmd() *cobra.Command {
	var excludeFlagged bool
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Analyse a results directory again and rewrite its reports",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := record.Open(args[0])
			if err != nil {
				return &exitError{exitUsage, err}
			}
			if _, err := renderDir(cmd.OutOrStdout(), dir, excludeFlagged); err != nil {
				return &exitError{exitFailure, err}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&excludeFlagged, "exclude-flagged", false, "leave flagged trials out of the comparison (they are still shown)")
	return cmd
}
