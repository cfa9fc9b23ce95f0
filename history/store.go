// Package history keeps a record of runs in a database, so that an
// agent's overhead can be followed from run to run: each run's changes
// against its baseline, with their intervals, and what identifies the run
// (scenario, labels such as the agent's version, the machine's
// fingerprint, toll's version).
//
// The database is a SQLite file by default (one file, no server, created
// on first use) or a PostgreSQL server for a team that shares it
// (postgres:// or postgresql:// URLs); both hold the same schema.
package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	_ "modernc.org/sqlite"             // the "sqlite" driver
)

// Store is an open history.
type Store struct {
	db      *sql.DB
	dialect dialect
	where   string
}

// dialect is what differs between the two databases.
type dialect struct {
	name   string
	serial string // an auto-numbered key
}

var (
	sqlite   = dialect{name: "sqlite", serial: "INTEGER PRIMARY KEY AUTOINCREMENT"}
	postgres = dialect{name: "postgres", serial: "BIGSERIAL PRIMARY KEY"}
)

// Open opens the history at where, a PostgreSQL URL or a SQLite file's
// path, creating the file and its schema when they do not exist yet.
func Open(ctx context.Context, where string) (*Store, error) {
	var db *sql.DB
	var d dialect
	var err error
	if strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://") {
		d = postgres
		db, err = sql.Open("pgx", where)
	} else {
		d = sqlite
		if dir := filepath.Dir(where); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("history %s: %w", where, err)
			}
		}
		// Writers wait for one another (busy_timeout) and each
		// transaction takes the write lock when it begins, so that two
		// runs recording at once queue rather than fail.
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(30000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Add("_txlock", "immediate")
		db, err = sql.Open("sqlite", "file:"+where+"?"+q.Encode())
	}
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", redact(where), err)
	}
	s := &Store{db: db, dialect: d, where: redact(where)}
	if err := s.create(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// redact hides a URL's password.
func redact(where string) string {
	if u, err := url.Parse(where); err == nil && u.User != nil {
		return u.Redacted()
	}
	return where
}

// Close closes the history.
func (s *Store) Close() error { return s.db.Close() }

// String names the history (a PostgreSQL URL without its password).
func (s *Store) String() string { return s.where }

// create makes the schema where it is missing.
func (s *Store) create(ctx context.Context) error {
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS runs (
			id ` + s.dialect.serial + `,
			scenario TEXT NOT NULL,
			started TEXT NOT NULL,
			seed BIGINT NOT NULL,
			recorded TEXT NOT NULL,
			dir TEXT NOT NULL,
			toll_version TEXT NOT NULL,
			cpu_model TEXT NOT NULL,
			cores INTEGER NOT NULL,
			kernel TEXT NOT NULL,
			cgroup TEXT NOT NULL,
			labels TEXT NOT NULL,
			valid BOOLEAN NOT NULL,
			UNIQUE (scenario, started, seed))`,
		`CREATE TABLE IF NOT EXISTS estimates (
			run BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
			step TEXT NOT NULL,
			variant TEXT NOT NULL,
			cost TEXT NOT NULL,
			label TEXT NOT NULL,
			unit TEXT NOT NULL,
			method TEXT NOT NULL,
			value DOUBLE PRECISION NOT NULL,
			baseline DOUBLE PRECISION NOT NULL,
			change DOUBLE PRECISION,
			low DOUBLE PRECISION,
			high DOUBLE PRECISION,
			rounds INTEGER NOT NULL,
			PRIMARY KEY (run, step, variant, cost))`,
	}
	for _, q := range stmts {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("history %s: create its tables: %w", s.where, err)
		}
	}
	return nil
}

// Machine is what identifies the machine a run ran on: runs of machines
// with different fingerprints are not compared.
type Machine struct {
	CPUModel string `json:"cpu_model"`
	Cores    int    `json:"cores"`
	Kernel   string `json:"kernel"`
	Cgroup   string `json:"cgroup"`
}

// Fingerprint is the machine in one string.
func (m Machine) Fingerprint() string {
	return fmt.Sprintf("%s, %d cores, linux %s, cgroup %s", m.CPUModel, m.Cores, m.Kernel, m.Cgroup)
}

// Run is one recorded run.
type Run struct {
	// ID is the history's number for the run (0 before it is added).
	ID int64 `json:"id"`
	// Scenario, Started and Seed identify the run: adding it twice adds
	// it once.
	Scenario string    `json:"scenario"`
	Started  time.Time `json:"started"`
	Seed     int64     `json:"seed"`
	// Recorded is when the run was added to the history.
	Recorded time.Time `json:"recorded"`
	// Dir is the run's results directory as it was given.
	Dir         string            `json:"dir"`
	TollVersion string            `json:"toll_version"`
	Machine     Machine           `json:"machine"`
	Labels      map[string]string `json:"labels,omitempty"`
	// Valid is false for a run whose measurement was invalid or partial.
	Valid     bool       `json:"valid"`
	Estimates []Estimate `json:"estimates,omitempty"`
}

// Estimate is one cost of one variant at one load step of a run.
type Estimate struct {
	Step    string `json:"step"`
	Variant string `json:"variant"`
	Cost    string `json:"cost"`
	Label   string `json:"label"`
	Unit    string `json:"unit"`
	// Method is "log-ratio" (Change, Low and High in percent) or
	// "difference" (in Unit).
	Method   string  `json:"method"`
	Value    float64 `json:"value"`
	Baseline float64 `json:"baseline"`
	// Change is the change against the baseline; Low and High bound its
	// 95% interval (absent with a single round).
	Change *float64 `json:"change,omitempty"`
	Low    *float64 `json:"low,omitempty"`
	High   *float64 `json:"high,omitempty"`
	Rounds int      `json:"rounds"`
}

// ErrRecorded is returned by Add for a run the history holds already.
var ErrRecorded = errors.New("already recorded")

// Add records r and its estimates in one transaction, and returns its ID.
// A run the history holds already (same scenario, start and seed) is left
// as it is, and Add returns its ID and ErrRecorded.
func (s *Store) Add(ctx context.Context, r *Run) (int64, error) {
	labels, err := json.Marshal(r.Labels)
	if err != nil {
		return 0, err
	}
	if r.Labels == nil {
		labels = []byte("{}")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("history %s: %w", s.where, err)
	}
	defer tx.Rollback()
	started := r.Started.UTC().Format(time.RFC3339Nano)
	var id int64
	err = tx.QueryRowContext(ctx, `SELECT id FROM runs WHERE scenario = $1 AND started = $2 AND seed = $3`, r.Scenario, started, r.Seed).Scan(&id)
	switch {
	case err == nil:
		return id, ErrRecorded
	case !errors.Is(err, sql.ErrNoRows):
		return 0, fmt.Errorf("history %s: %w", s.where, err)
	}
	err = tx.QueryRowContext(ctx, `INSERT INTO runs (scenario, started, seed, recorded, dir, toll_version, cpu_model, cores, kernel, cgroup, labels, valid)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
		r.Scenario, started, r.Seed, r.Recorded.UTC().Format(time.RFC3339Nano), r.Dir, r.TollVersion,
		r.Machine.CPUModel, r.Machine.Cores, r.Machine.Kernel, r.Machine.Cgroup, string(labels), r.Valid).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("history %s: add the run: %w", s.where, err)
	}
	for _, e := range r.Estimates {
		_, err := tx.ExecContext(ctx, `INSERT INTO estimates (run, step, variant, cost, label, unit, method, value, baseline, change, low, high, rounds)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			id, e.Step, e.Variant, e.Cost, e.Label, e.Unit, e.Method, e.Value, e.Baseline, e.Change, e.Low, e.High, e.Rounds)
		if err != nil {
			return 0, fmt.Errorf("history %s: add %s's %s at %s: %w", s.where, e.Variant, e.Cost, e.Step, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("history %s: %w", s.where, err)
	}
	r.ID = id
	return id, nil
}

// Filter chooses runs: by scenario, and by labels that must all match
// (empty: any).
type Filter struct {
	Scenario string
	Labels   map[string]string
}

// Runs returns the runs that f chooses with their estimates, oldest first
// (by when each started).
func (s *Store) Runs(ctx context.Context, f Filter) ([]*Run, error) {
	q := `SELECT id, scenario, started, seed, recorded, dir, toll_version, cpu_model, cores, kernel, cgroup, labels, valid FROM runs`
	var args []any
	if f.Scenario != "" {
		q += ` WHERE scenario = $1`
		args = append(args, f.Scenario)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY started, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", s.where, err)
	}
	defer rows.Close()
	var runs []*Run
	byID := map[int64]*Run{}
	for rows.Next() {
		r := &Run{}
		var started, recorded, labels string
		if err := rows.Scan(&r.ID, &r.Scenario, &started, &r.Seed, &recorded, &r.Dir, &r.TollVersion,
			&r.Machine.CPUModel, &r.Machine.Cores, &r.Machine.Kernel, &r.Machine.Cgroup, &labels, &r.Valid); err != nil {
			return nil, fmt.Errorf("history %s: %w", s.where, err)
		}
		r.Started, _ = time.Parse(time.RFC3339Nano, started)
		r.Recorded, _ = time.Parse(time.RFC3339Nano, recorded)
		if err := json.Unmarshal([]byte(labels), &r.Labels); err != nil {
			return nil, fmt.Errorf("history %s: run %d's labels: %w", s.where, r.ID, err)
		}
		if !matches(r.Labels, f.Labels) {
			continue
		}
		runs = append(runs, r)
		byID[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: %w", s.where, err)
	}
	if len(runs) == 0 {
		return nil, nil
	}
	return runs, s.estimates(ctx, f.Scenario, byID)
}

// matches says whether labels hold every one of want.
func matches(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// estimates fills in the estimates of the runs in byID.
// scenario, when set, narrows the query to its runs.
func (s *Store) estimates(ctx context.Context, scenario string, byID map[int64]*Run) error {
	q := `SELECT run, step, variant, cost, label, unit, method, value, baseline, change, low, high, rounds FROM estimates`
	var args []any
	if scenario != "" {
		q += ` WHERE run IN (SELECT id FROM runs WHERE scenario = $1)`
		args = append(args, scenario)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY run, step, variant, cost`, args...)
	if err != nil {
		return fmt.Errorf("history %s: %w", s.where, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var e Estimate
		var change, low, high sql.NullFloat64
		if err := rows.Scan(&id, &e.Step, &e.Variant, &e.Cost, &e.Label, &e.Unit, &e.Method, &e.Value, &e.Baseline, &change, &low, &high, &e.Rounds); err != nil {
			return fmt.Errorf("history %s: %w", s.where, err)
		}
		r, ok := byID[id]
		if !ok {
			continue
		}
		e.Change, e.Low, e.High = nullable(change), nullable(low), nullable(high)
		r.Estimates = append(r.Estimates, e)
	}
	return rows.Err()
}

func nullable(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	return &f.Float64
}
