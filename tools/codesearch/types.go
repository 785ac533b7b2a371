package codesearch

import (
	"sort"
	"strings"

	"github.com/go-harness/harness/internal/pathmatch"
)

// fileTypes maps ripgrep's names of the common file types to the file
// names they cover.
var fileTypes = map[string]string{
	"c":          "*.c,*.h,*.H,*.cats",
	"clojure":    "*.clj,*.cljc,*.cljs,*.cljx,*.edn",
	"cmake":      "*.cmake,CMakeLists.txt",
	"cpp":        "*.C,*.cc,*.cpp,*.cxx,*.c++,*.h,*.H,*.hh,*.hpp,*.hxx,*.h++,*.inl,*.ipp",
	"cs":         "*.cs",
	"css":        "*.css,*.scss",
	"csv":        "*.csv",
	"dart":       "*.dart",
	"docker":     "*Dockerfile*,*.dockerfile",
	"elixir":     "*.ex,*.eex,*.exs,*.heex,*.leex",
	"erlang":     "*.erl,*.hrl",
	"go":         "*.go",
	"gradle":     "*.gradle,*.gradle.kts",
	"haskell":    "*.hs,*.lhs,*.cabal",
	"html":       "*.htm,*.html,*.ejs",
	"java":       "*.java,*.jsp,*.jspx,*.properties",
	"js":         "*.js,*.jsx,*.vue,*.cjs,*.mjs",
	"json":       "*.json,composer.lock,*.sarif",
	"jsonl":      "*.jsonl",
	"julia":      "*.jl",
	"kotlin":     "*.kt,*.kts",
	"lua":        "*.lua",
	"make":       "[Gg][Nn][Uu]makefile,[Mm]akefile,[Gg][Nn][Uu]makefile.am,[Mm]akefile.am,[Gg][Nn][Uu]makefile.in,[Mm]akefile.in,*.mk,*.mak",
	"markdown":   "*.markdown,*.md,*.mdown,*.mdwn,*.mkd,*.mkdn,*.mdx",
	"md":         "*.markdown,*.md,*.mdown,*.mdwn,*.mkd,*.mkdn,*.mdx",
	"nix":        "*.nix",
	"ocaml":      "*.ml,*.mli,*.mll,*.mly",
	"perl":       "*.perl,*.pl,*.PL,*.plh,*.plx,*.pm,*.t",
	"php":        "*.php,*.php3,*.php4,*.php5,*.php7,*.php8,*.pht,*.phtml",
	"proto":      "*.proto",
	"ps":         "*.cdxml,*.ps1,*.ps1xml,*.psd1,*.psm1",
	"py":         "*.py,*.pyi",
	"python":     "*.py,*.pyi",
	"r":          "*.R,*.r,*.Rmd,*.Rnw",
	"rst":        "*.rst",
	"ruby":       "Gemfile,*.gemspec,.irbrc,Rakefile,*.rb,*.rbw",
	"rust":       "*.rs",
	"scala":      "*.scala,*.sbt",
	"sh":         "*.bash,*.bashrc,*.csh,*.cshrc,*.ksh,*.kshrc,*.sh,*.tcsh,*.zsh,.bashrc,.zshrc,.profile,.bash_profile",
	"sql":        "*.sql,*.psql",
	"svelte":     "*.svelte",
	"swift":      "*.swift",
	"tex":        "*.tex,*.ltx,*.cls,*.sty,*.bib,*.dtx,*.ins",
	"tf":         "*.tf,*.tfvars,*.tf.json",
	"toml":       "*.toml,Cargo.lock",
	"ts":         "*.ts,*.tsx,*.cts,*.mts",
	"typescript": "*.ts,*.tsx,*.cts,*.mts",
	"txt":        "*.txt",
	"vim":        "*.vim,.vimrc,.gvimrc,vimrc,gvimrc",
	"xml":        "*.xml,*.xml.dist,*.dtd,*.xsl,*.xslt,*.xsd,*.xjb,*.rng,*.sch,*.xhtml",
	"yaml":       "*.yaml,*.yml",
	"zig":        "*.zig",
}

// typeNames lists the known types, sorted.
func typeNames() string {
	names := make([]string, 0, len(fileTypes))
	for n := range fileTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// typeGlob compiles a type's file names into one basename glob.
func typeGlob(name string) (*pathmatch.Glob, bool) {
	globs, ok := fileTypes[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return nil, false
	}
	if strings.Contains(globs, ",") {
		globs = "{" + globs + "}"
	}
	g, err := pathmatch.CompileGlob(globs, pathmatch.GlobOptions{Basename: true})
	return g, err == nil
}
