package record

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/pprof/profile"
)

// profilesDir holds the profiles of a run: each trial's, and the analysis's
// per variant.
const profilesDir = "profiles"

// TrialProfileFile is the name of trial t's profile, relative to the
// directory.
func TrialProfileFile(t *Trial) string {
	return filepath.Join(profilesDir, "trials", fmt.Sprintf("%04d-%s.pb.gz", t.Index, safeName(t.Variant)))
}

// VariantProfileFile is the name of a variant's profile per request at a
// load step, relative to the directory: profiles/<variant>.pb.gz at the
// run's only step, with the step's number otherwise.
func VariantProfileFile(variant string, step, steps int) string {
	if steps <= 1 {
		return filepath.Join(profilesDir, safeName(variant)+".pb.gz")
	}
	return filepath.Join(profilesDir, fmt.Sprintf("%s-step%d.pb.gz", safeName(variant), step))
}

// WriteProfile writes p, gzipped, to name (relative to the directory).
func (d *Dir) WriteProfile(name string, p *profile.Profile) error {
	if err := d.mkdirAll(filepath.Dir(name)); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	return d.WriteFile(name, b.Bytes())
}

// ReadProfile reads the profile at name (relative to the directory).
func (d *Dir) ReadProfile(name string) (*profile.Profile, error) {
	path := filepath.Join(d.Path, name)
	f, err := d.openFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("read profile %s: %w", path, err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("read profile %s: %w", path, err)
	}
	return p, nil
}
