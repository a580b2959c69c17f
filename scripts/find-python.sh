# Sourced by scripts/check-wheel.sh and scripts/check-pyarrow.sh: find_python X.Y prints an
# interpreter of Python X.Y, pythonX.Y on PATH if it runs (pyenv's shims refuse a version not
# selected), else pyenv's newest X.Y; it fails (status 1, nothing printed) when there is none.
find_python() {
    local version=$1 candidate
    candidate=$(command -v "python$version" 2>/dev/null || true)
    if [ -n "$candidate" ] && "$candidate" -c 'import sys' >/dev/null 2>&1; then
        echo "$candidate"
        return
    fi
    # pyenv's own interpreters, newest X.Y.Z first (`pyenv latest` takes no -q before 2.4).
    local pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
    command -v pyenv >/dev/null 2>&1 && pyenv_root=$(pyenv root)
    for candidate in $(ls -d "$pyenv_root/versions/$version".*/bin/"python$version" 2>/dev/null | sort -V -r); do
        if "$candidate" -c 'import sys' >/dev/null 2>&1; then
            echo "$candidate"
            return
        fi
    done
    return 1
}

# The versions of .ci/pythons, one a line, in its order.
ci_pythons() {
    grep -v -E '^[[:space:]]*(#|$)' "$(dirname "${BASH_SOURCE[0]}")/../.ci/pythons"
}
