package main

import (
	"github.com/spf13/cobra"

	"github.com/tollperf/toll/record"
)

func newReportCmd() *cobra.Command {
	var opt renderOptions
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Analyse a results directory again and rewrite its reports",
		Long: `Analyse a results directory again and rewrite its reports. A run that did not
carry out its whole plan (interrupted, killed, stopped by an error) is reported
as partial, with the trials it is missing.

` + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := record.Open(args[0])
			if err != nil {
				return &exitError{exitUsage, err}
			}
			sum, _, err := renderDir(cmd.Context(), cmd.OutOrStdout(), dir, opt)
			if err != nil {
				return &exitError{exitFailure, err}
			}
			return invalid(sum)
		},
	}
	cmd.Flags().StringVar(&opt.push, "push", "", "also push the summary's metrics to this Prometheus Pushgateway URL")
	cmd.Flags().BoolVar(&opt.excludeFlagged, "exclude-flagged", false, "leave flagged trials out of the comparison (they are still shown)")
	cmd.Flags().BoolVar(&opt.includeInterrupted, "include-interrupted", false, "keep trials cut short (interrupted) in the comparison (by default they are left out, and still shown)")
	return cmd
}
