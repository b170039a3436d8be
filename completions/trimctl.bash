# bash completion for trimctl(1)

_trimctl_mount_points() {
    findmnt -rn -o TARGET 2>/dev/null
}

_trimctl() {
    local cur prev words cword
    _init_completion || return

    local commands="status trim pause resume cancel reload notify-freed monitor takeover release history fleet"
    local options="--address --json --no-pager --help --version"

    if [[ $prev == --address ]]; then
        return
    fi

    local command="" i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --address) ((i++)) ;;
            -*) ;;
            *) command=${words[i]}; break ;;
        esac
    done

    if [[ $cur == -* ]]; then
        [[ $command == trim ]] && options+=" --wait --ignore-idle"
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
        return
    fi

    case $command in
        "") COMPREPLY=($(compgen -W "$commands" -- "$cur")) ;;
        status | trim | pause | resume | cancel | takeover | release | history)
            local IFS=$'\n'
            COMPREPLY=($(compgen -W "$(_trimctl_mount_points)" -- "$cur"))
            ;;
        notify-freed)
            # MOUNT, then BYTES: only the mount point is completed.
            if [[ ${words[cword - 1]} == notify-freed ]]; then
                local IFS=$'\n'
                COMPREPLY=($(compgen -W "$(_trimctl_mount_points)" -- "$cur"))
            fi
            ;;
    esac
} &&
    complete -F _trimctl trimctl
