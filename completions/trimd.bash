# bash completion for trimd(8)

_trimd() {
    local cur prev words cword
    _init_completion || return

    case $prev in
        -c | --config)
            _filedir toml
            return
            ;;
        -s | --state-dir)
            _filedir -d
            return
            ;;
        --log-level)
            COMPREPLY=($(compgen -W "trace debug info warn error" -- "$cur"))
            return
            ;;
        --log-format)
            COMPREPLY=($(compgen -W "text json" -- "$cur"))
            return
            ;;
        --bus-address)
            return
            ;;
    esac

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--config --state-dir --foreground --dry-run --once
            --check-config --cat-config --bus-address --no-bus --log-level --log-format --version --help" -- "$cur"))
        return
    fi

    # Mount points, for --once.
    local IFS=$'\n'
    COMPREPLY=($(compgen -W "$(findmnt -rn -o TARGET 2>/dev/null)" -- "$cur"))
} &&
    complete -F _trimd trimd
