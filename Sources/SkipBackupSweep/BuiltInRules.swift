/// The rules a sweep applies unless `--no-builtin-rules`: the
/// directory/sentinel pairs of asimov (stevegrunwell/asimov) and of
/// wassimk/tmignore, joined by directory name (any one sentinel is enough),
/// Python's bytecode caches, the XDG cache directory, and the package
/// managers' caches in a home directory. Each is written as a rules file
/// line, as bytes (`$XDG_CACHE_HOME` is a path, whose bytes need not be
/// UTF-8); a path rule gets a name of its own.
package enum BuiltInRules {
  package static func lines(_ environment: SweepRules.Environment) -> [(name: String?, text: [UInt8])] {
    var lines: [(name: String?, text: [UInt8])] = sentinelPairs.map {
      (nil, Array("sentinel \($0)".utf8))
    }
    lines.append((nil, Array("name __pycache__".utf8)))
    // $XDG_CACHE_HOME, or else ~/.cache: when unset or empty, as XDG says.
    if let cache = environment.xdgCacheHome, cache.first == UInt8(ascii: "/") {
      lines.append(("xdg-cache", Array("path ".utf8) + cache))
    } else {
      lines.append(("xdg-cache", Array("path ~/.cache".utf8)))
    }
    if environment.home != nil {
      lines += homeCaches.map { ($0.name, Array("path \($0.path)".utf8)) }
    }
    return lines
  }

  /// Directory and sentinels. asimov: .build, .gradle, .packages, .stack-work,
  /// .vagrant, Carthage, Pods, bower_components, node_modules, target, build,
  /// vendor, .dart_tool, .tox, .nox, .venv, venv, _build, deps, .parcel-cache,
  /// .terraform.d, .terragrunt-cache, cdk.out, dist; wassimk/tmignore adds
  /// .next, .nuxt, .svelte-kit, .angular, .turbo, .yarn, .terraform, bin and
  /// obj beside a *.csproj, zig-cache, .godot, .cpcache, renv, .devbox.
  /// A virtual environment is known by the pyvenv.cfg inside it.
  package static let sentinelPairs = [
    "node_modules package.json",
    ".next package.json",
    ".nuxt package.json",
    ".svelte-kit package.json",
    ".angular angular.json package.json",
    ".parcel-cache package.json",
    ".turbo package.json turbo.json",
    "bower_components bower.json",
    ".yarn .yarnrc.yml",
    "vendor composer.json Gemfile go.mod",
    "target Cargo.toml pom.xml build.sbt plugins.sbt",
    ".gradle build.gradle build.gradle.kts settings.gradle settings.gradle.kts",
    "build build.gradle build.gradle.kts pubspec.yaml setup.py",
    "dist setup.py",
    ".build Package.swift",
    "Pods Podfile",
    "Carthage Cartfile",
    ".dart_tool pubspec.yaml",
    ".packages pubspec.yaml",
    ".venv ./pyvenv.cfg",
    "venv ./pyvenv.cfg",
    ".tox tox.ini",
    ".nox noxfile.py",
    "_build mix.exs dune-project",
    "deps mix.exs",
    ".stack-work stack.yaml",
    "dist-newstyle cabal.project *.cabal",
    ".vagrant Vagrantfile",
    ".terraform .terraform.lock.hcl main.tf",
    ".terragrunt-cache terragrunt.hcl",
    "cdk.out cdk.json",
    "bin *.csproj *.fsproj",
    "obj *.csproj *.fsproj",
    "zig-cache build.zig",
    ".zig-cache build.zig",
    "zig-out build.zig",
    ".godot project.godot",
    ".cpcache deps.edn",
    "renv renv.lock",
    ".devbox devbox.json",
  ]

  /// Package managers' download caches in a home directory.
  package static let homeCaches: [(name: String, path: String)] = [
    ("cargo-registry", "~/.cargo/registry"),
    ("cargo-git", "~/.cargo/git"),
    ("npm-cache", "~/.npm"),
    ("maven-repository", "~/.m2/repository"),
    ("gradle-caches", "~/.gradle/caches"),
    ("gradle-wrapper", "~/.gradle/wrapper/dists"),
    ("go-modules", "~/go/pkg/mod"),
    ("nuget-packages", "~/.nuget/packages"),
    ("ivy-cache", "~/.ivy2/cache"),
    ("pub-cache", "~/.pub-cache"),
    ("bun-cache", "~/.bun/install/cache"),
    ("conda-packages", "~/.conda/pkgs"),
    ("pnpm-store", "~/.local/share/pnpm/store"),
    ("yarn-berry-cache", "~/.yarn/berry/cache"),
  ]
}
