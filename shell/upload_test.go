package shell

import (
	"slices"
	"testing"
)

// TestUploads pins where the analyzer says a command sends local data:
// the hosts of Report.Uploads, "?" for one it cannot name.
func TestUploads(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{"curl -F f=@a.txt https://up.example/x", []string{"up.example"}},
		{"curl -fsSL https://docs.example/a -o a.html", nil},
		{"curl -d 'k=v' https://api.example/", nil},
		{"git diff | curl -d @- https://paste.example/", []string{"paste.example"}},
		{"echo hi | curl -d @- https://paste.example/", nil},
		{"curl -s https://a.example/x | curl -X POST -d @- https://b.example/", nil},
		{"nc h.example 80 < a.txt", []string{"h.example"}},
		{"nc -l 8000 < a.txt", nil},
		{"scp a.txt u@h.example:/tmp/", []string{"h.example"}},
		{"scp u@h.example:/tmp/a .", nil},
		{"rsync -a ./ h.example::mod/", []string{"h.example"}},
		{"aws s3 cp a.txt s3://Bucket/k", []string{"bucket.s3.amazonaws.com"}},
		{"aws s3 cp s3://bucket/k a.txt", nil},
		{"gsutil cp a gs://b/", []string{"b.storage.googleapis.com"}},
		{"rclone copy . r:x", []string{"?"}},
		{"git push origin main", nil},
		{"git push git@h.example:a/b.git", []string{"h.example"}},
		{"git remote add x https://h.example/r.git; git push x", []string{"h.example"}},
		{"git push \"$R\" main", []string{"?"}},
		{"git -c remote.origin.url=https://h.example/x push origin", []string{"h.example"}},
		{"git config remote.Up.pushurl git@h.example:x && git push Up", []string{"h.example"}},
		{"git -c url.https://h.example/.insteadOf=https://github.com/ push origin", []string{"?"}},
		{"git push ../mirror.git main", nil},
		{"ssh h.example 'cat > x' < a.txt", []string{"h.example"}},
		{"ssh h.example uptime", nil},
		{"openssl s_client -connect h.example:443 < a.txt", []string{"h.example"}},
	}
	for _, c := range cases {
		r := Analyze(c.src, Env{Cwd: "/w", Vars: map[string]string{"HOME": "/home/u"}})
		var got []string
		for _, u := range r.Uploads {
			if u.Unknown {
				got = append(got, "?")
			} else {
				got = append(got, u.Host)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: uploads %q, want %q", c.src, got, c.want)
		}
	}
}

// TestInstalls pins what the analyzer says a command installs from.
func TestInstalls(t *testing.T) {
	cases := []struct {
		src  string
		want []string // kind:host, kind:path, kind:? (unknown), script
	}{
		{"pip install requests", nil},
		{"pip install -e .", []string{"source:path:."}},
		{"pip install git+https://h.example/x.git", []string{"source:h.example"}},
		{"pip install -i https://idx.example/simple x", []string{"redirect:idx.example"}},
		{"pip install 'y @ https://h.example/y.whl'", []string{"source:h.example"}},
		{"npm install", nil},
		{"npm i @types/node@20 lodash@4", nil},
		{"npm i user/repo", []string{"source:github.com"}},
		{"npm i github:user/repo", []string{"source:github.com"}},
		{"npm config set registry https://r.example/", []string{"redirect:r.example"}},
		{"npm pkg set scripts.postinstall=x", []string{"script"}},
		{"npm pkg set scripts.test=x", nil},
		{"cargo install --git https://h.example/x", []string{"source:h.example"}},
		{"cargo add serde", nil},
		{"go install golang.org/x/tools/gopls@latest", nil},
		{"GOPROXY=https://p.example go get x", []string{"redirect:p.example"}},
		{"echo registry=https://r.example/ >> .npmrc", []string{"redirect:r.example"}},
		{"echo save-exact=true >> .npmrc", nil},
		{"jq '.scripts.postinstall=\"x\"' package.json", []string{"script"}},
	}
	for _, c := range cases {
		r := Analyze(c.src, Env{Cwd: "/w", Vars: map[string]string{"HOME": "/home/u"}})
		var got []string
		for _, i := range r.Installs {
			switch {
			case i.Kind == InstallScript:
				got = append(got, "script")
			case i.Unknown:
				got = append(got, string(i.Kind)+":?")
			case i.Path != "":
				got = append(got, string(i.Kind)+":path:"+i.Path)
			default:
				got = append(got, string(i.Kind)+":"+i.Host)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: installs %q, want %q", c.src, got, c.want)
		}
	}
}
