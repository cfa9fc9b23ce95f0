package runid

import "testing"

// FuzzParse feeds the label toll cleanup trusts (TOLL_RUN, a container's
// label, a cgroup tree's name) arbitrary text: an ID it accepts has a
// positive pid and reads back as itself, and no name is taken for a tree
// of a run unless its owner parses.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"999@8812", "1@0", "0@1", "-1@2", "12@", "@12", "1@2@3", "+7@8", "1 @2", "9223372036854775807@18446744073709551615", "demo-999@8812", "demo-42"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err == nil {
			if id.Pid <= 0 {
				t.Fatalf("Parse(%q) = %+v: pid not positive", s, id)
			}
			back, err := Parse(id.String())
			if err != nil || back != id {
				t.Fatalf("Parse(%q) = %+v, whose String %q parses as %+v, %v", s, id, id.String(), back, err)
			}
		}
		if env, ok, err := fromEnviron([]byte(EnvVar + "=" + s + "\x00")); err == nil && ok && env.Pid <= 0 {
			t.Fatalf("label %q read as %+v", s, env)
		}
		if owner, legacy, ok := TreeOwner(s); ok && owner.Pid <= 0 {
			t.Fatalf("TreeOwner(%q) = %+v (legacy %v)", s, owner, legacy)
		}
	})
}
