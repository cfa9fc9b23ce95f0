package record

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Dir is a results directory.
type Dir struct {
	// Path is the directory's path as given or created.
	Path string
	// root is the directory, held open since Create, CreateExact or Open:
	// every file Dir writes or reads is reached from it, not by Path, so
	// a directory renamed, or swapped for a symbolic link, while a run
	// goes is still the one written to, and no link inside it leads out.
	// A Dir made as a literal has none and goes by Path.
	root *os.Root
}

const (
	manifestFile = "manifest.json"
	trialsDir    = "trials"
	logsDir      = "logs"
)

// Create makes a new results directory root/<name>-<UTC time>. If that name
// is taken (two runs in the same second) a suffix is added.
func Create(root, name string, t time.Time) (*Dir, error) {
	base := filepath.Join(root, safeName(name)+"-"+t.UTC().Format("20060102T150405Z"))
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("create results root %s: %w", root, err)
	}
	path := base
	for i := 2; ; i++ {
		err := os.Mkdir(path, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return nil, fmt.Errorf("create results directory %s: %w", path, err)
		}
		path = fmt.Sprintf("%s-%d", base, i)
	}
	return initDir(path)
}

// CreateExact makes the results directory path, which must not exist or be
// empty, so that no earlier run's files are mixed in.
func CreateExact(path string) (*Dir, error) {
	if entries, err := os.ReadDir(path); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("results directory %s exists and is not empty", path)
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("create results directory %s: %w", path, err)
	}
	return initDir(path)
}

func initDir(path string) (*Dir, error) {
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, fmt.Errorf("open results directory %s: %w", path, err)
	}
	for _, sub := range []string{trialsDir, logsDir} {
		if err := root.MkdirAll(sub, 0o755); err != nil {
			root.Close()
			return nil, fmt.Errorf("create %s: %w", filepath.Join(path, sub), err)
		}
	}
	return &Dir{Path: path, root: root}, nil
}

// Open opens an existing results directory.
func Open(path string) (*Dir, error) {
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not a toll results directory: %w", path, err)
	}
	if _, err := root.Stat(manifestFile); err != nil {
		root.Close()
		return nil, fmt.Errorf("%s is not a toll results directory: %w", path, err)
	}
	return &Dir{Path: path, root: root}, nil
}

// openFile opens name, relative to the directory, as os.OpenFile does.
func (d *Dir) openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if d.root == nil {
		return os.OpenFile(filepath.Join(d.Path, name), flag, perm)
	}
	return d.root.OpenFile(name, flag, perm)
}

// lstat describes name, relative to the directory, as os.Lstat does.
func (d *Dir) lstat(name string) (fs.FileInfo, error) {
	if d.root == nil {
		return os.Lstat(filepath.Join(d.Path, name))
	}
	return d.root.Lstat(name)
}

// readFile reads name, relative to the directory, as os.ReadFile does.
func (d *Dir) readFile(name string) ([]byte, error) {
	if d.root == nil {
		return os.ReadFile(filepath.Join(d.Path, name))
	}
	return d.root.ReadFile(name)
}

// readDir lists name, relative to the directory, as os.ReadDir does.
func (d *Dir) readDir(name string) ([]fs.DirEntry, error) {
	if d.root == nil {
		return os.ReadDir(filepath.Join(d.Path, name))
	}
	return fs.ReadDir(d.root.FS(), name)
}

// mkdirAll makes name, relative to the directory, as os.MkdirAll does.
func (d *Dir) mkdirAll(name string) error {
	if d.root == nil {
		return os.MkdirAll(filepath.Join(d.Path, name), 0o755)
	}
	return d.root.MkdirAll(name, 0o755)
}

// rename renames from to to, both relative to the directory.
func (d *Dir) rename(from, to string) error {
	if d.root == nil {
		return os.Rename(filepath.Join(d.Path, from), filepath.Join(d.Path, to))
	}
	return d.root.Rename(from, to)
}

// remove removes name, relative to the directory.
func (d *Dir) remove(name string) error {
	if d.root == nil {
		return os.Remove(filepath.Join(d.Path, name))
	}
	return d.root.Remove(name)
}

// createTemp creates a new file beside name, relative to the directory,
// named for it with a random suffix (".name.123456"), open for writing
// and readable by its owner alone until it is given its mode.
func (d *Dir) createTemp(name string) (string, *os.File, error) {
	for range 100 {
		tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+"."+strconv.FormatUint(rand.Uint64(), 36))
		f, err := d.openFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return tmp, f, err
	}
	return "", nil, fmt.Errorf("no free temporary name beside %s", name)
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeName makes s usable as a file name component.
func safeName(s string) string {
	s = strings.Trim(unsafeChars.ReplaceAllString(s, "_"), "._")
	if s == "" {
		return "run"
	}
	return s
}

// WriteFile writes name (relative to the directory) whole: a temporary file
// is written, synced and renamed, so readers never see a partial file.
func (d *Dir) WriteFile(name string, data []byte) error {
	return d.WriteFileWith(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WritePrivateFile writes name as WriteFile does, readable by its owner
// alone (mode 0600): a file that may hold secrets, such as the copy of a
// scenario whose services' environment carries a token.
func (d *Dir) WritePrivateFile(name string, data []byte) error {
	return d.writeFileWith(name, 0o600, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFileWith writes name as WriteFile does, its content written by
// write through a buffer of 64 KiB: a file too large to hold in memory (a
// day's series.csv) is never held whole. An error of write's is returned
// as it is (a failed write to the file names the file); a partial file is
// removed.
func (d *Dir) WriteFileWith(name string, write func(io.Writer) error) error {
	return d.writeFileWith(name, 0o644, write)
}

// writeFileWith is WriteFileWith, the file given mode perm.
func (d *Dir) writeFileWith(name string, perm os.FileMode, write func(io.Writer) error) error {
	path := filepath.Join(d.Path, name)
	tmpName, tmp, err := d.createTemp(name)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer d.remove(tmpName) // no-op after a successful rename
	bw := bufio.NewWriterSize(tmp, 64<<10)
	if err := write(bw); err != nil {
		tmp.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := d.rename(tmpName, name); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func (d *Dir) writeJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return d.WriteFile(name, append(b, '\n'))
}

func (d *Dir) readJSON(name string, v any) error {
	path := filepath.Join(d.Path, name)
	b, err := d.readFile(name)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// LogPath is the path of the service log file name, to name it: the file
// is opened by OpenLog, from the directory held open.
func (d *Dir) LogPath(name string) string { return filepath.Join(d.Path, logsDir, name) }

// OpenLog opens the log file name (relative to the logs directory, as
// LogPath takes it) as os.OpenFile does, reached from the directory held
// open and not by LogPath: a service or hook started after the directory
// was moved away, or swapped for a symbolic link, still logs into it.
func (d *Dir) OpenLog(name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := d.openFile(filepath.Join(logsDir, name), flag, perm)
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", d.LogPath(name), err)
	}
	return f, nil
}

// LogOpener returns a function that opens the log file name as OpenLog
// does, for a service's launch.Spec.OpenLog.
func (d *Dir) LogOpener(name string) func(flag int, perm os.FileMode) (*os.File, error) {
	return func(flag int, perm os.FileMode) (*os.File, error) { return d.OpenLog(name, flag, perm) }
}

// Open opens name, relative to the directory, for reading, reached from
// the directory held open, as every file of the run is: a file such as
// summary.json, streamed rather than read whole.
func (d *Dir) Open(name string) (*os.File, error) {
	f, err := d.openFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(d.Path, name), err)
	}
	return f, nil
}

// ReadFile reads name, relative to the directory, whole, reached from the
// directory held open.
func (d *Dir) ReadFile(name string) ([]byte, error) {
	b, err := d.readFile(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(d.Path, name), err)
	}
	return b, nil
}

// ReadLogs lists the logs directory, reached from the directory held open.
func (d *Dir) ReadLogs() ([]fs.DirEntry, error) {
	entries, err := d.readDir(logsDir)
	if err != nil {
		return nil, fmt.Errorf("read logs of %s: %w", d.Path, err)
	}
	return entries, nil
}

// WriteManifest writes manifest.json, setting its schema version.
func (d *Dir) WriteManifest(m *Manifest) error {
	m.SchemaVersion = SchemaVersion
	return d.writeJSON(manifestFile, m)
}

// ManifestWritten returns when manifest.json was last written: after
// every trial while a run goes on, so about when a run killed outright
// ended.
func (d *Dir) ManifestWritten() (time.Time, error) {
	st, err := d.lstat(manifestFile)
	if err != nil {
		return time.Time{}, fmt.Errorf("read %s: %w", filepath.Join(d.Path, manifestFile), err)
	}
	return st.ModTime(), nil
}

// ReadManifest reads manifest.json.
func (d *Dir) ReadManifest() (*Manifest, error) {
	var m Manifest
	if err := d.readJSON(manifestFile, &m); err != nil {
		return nil, err
	}
	if err := checkSchema(filepath.Join(d.Path, manifestFile), m.SchemaVersion); err != nil {
		return nil, err
	}
	return &m, nil
}

// checkSchema refuses a file (path, for the error) of a schema version this
// toll does not read: a newer one, or one below 1, which no toll writes (a
// file with no schema_version, or 0, was not written by toll as it is).
func checkSchema(path string, version int) error {
	switch {
	case version > SchemaVersion:
		return fmt.Errorf("%s: schema version %d is newer than this toll reads (%d): upgrade toll", path, version, SchemaVersion)
	case version < 1:
		return fmt.Errorf("%s: schema_version %d (or none): toll writes 1 and up, so the file was not written by toll as it is, or was edited", path, version)
	}
	return nil
}

// TrialFile is the name of trial t's file, relative to the directory.
func TrialFile(t *Trial) string {
	return filepath.Join(trialsDir, fmt.Sprintf("%04d-%s.json", t.Index, safeName(t.Variant)))
}

// WriteTrial writes one trial's file.
func (d *Dir) WriteTrial(t *Trial) error {
	t.SchemaVersion = SchemaVersion
	return d.writeJSON(TrialFile(t), t)
}

// AsideDir is where SetAside moves trials that the run measured but does
// not compare, relative to the directory, each in a folder named for why
// (the mode they were measured in): ReadTrials does not read them.
const AsideDir = "trials/aside"

// SetAside moves trial t's file, and its latency log where there is one,
// into AsideDir's folder why, where they are kept but not read as the
// run's trials.
func (d *Dir) SetAside(t *Trial, why string) error {
	to := filepath.Join(AsideDir, safeName(why))
	if err := d.mkdirAll(to); err != nil {
		return fmt.Errorf("set trial %d aside: %w", t.Index, err)
	}
	name := TrialFile(t)
	hlog := strings.TrimSuffix(name, ".json") + ".hlog"
	for _, f := range []string{name, hlog} {
		err := d.rename(f, filepath.Join(to, filepath.Base(f)))
		if err != nil && !(f == hlog && errors.Is(err, fs.ErrNotExist)) {
			return fmt.Errorf("set trial %d aside: %w", t.Index, err)
		}
	}
	return nil
}

// Unreadable is a trial file that could not be read back: truncated,
// empty, not a trial, or of a newer schema than this toll reads.
type Unreadable struct {
	// File is the file's path, relative to the results directory.
	File string `json:"file"`
	// Reason says why it could not be read.
	Reason string `json:"reason"`
}

// ReadTrials reads every trial file, in the order the trials ran. A file
// that cannot be read does not hide the others: it is returned in
// unreadable, with why, for the caller to say and leave out as it does a
// missing trial. err is an error reading the directory itself.
func (d *Dir) ReadTrials() (trials []*Trial, unreadable []Unreadable, err error) {
	entries, err := d.readDir(trialsDir)
	if err != nil {
		return nil, nil, fmt.Errorf("read trials of %s: %w", d.Path, err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		name := filepath.Join(trialsDir, e.Name())
		var t Trial
		if err := d.readJSON(name, &t); err != nil {
			unreadable = append(unreadable, Unreadable{File: name, Reason: err.Error()})
			continue
		}
		if err := checkSchema(filepath.Join(d.Path, name), t.SchemaVersion); err != nil {
			unreadable = append(unreadable, Unreadable{File: name, Reason: err.Error()})
			continue
		}
		trials = append(trials, &t)
	}
	sort.Slice(trials, func(i, j int) bool { return trials[i].Index < trials[j].Index })
	return trials, unreadable, nil
}
