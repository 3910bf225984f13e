# bash completion for cordon (installed by `meson install` into bash-completion's
# completions directory).  The options come from `cordon help run` itself, so they are
# those of the cordon being completed; workspace and session names from `cordon
# workspace list` and `cordon session list --json`.

# the options of `cordon run`, or the completion of one option's value; 0 when done
_cordon_run_options()
{
    local cmd=$1
    case $prev in
    --base) COMPREPLY=($(compgen -W "system host empty" -- "$cur")); return 0 ;;
    --network) COMPREPLY=($(compgen -W "none host proxy" -- "$cur")); return 0 ;;
    --isolation) COMPREPLY=($(compgen -W "namespaces landlock auto" -- "$cur")); return 0 ;;
    --workspace | --chdir | --data-root | --root | --source)
        COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
    --allow | --allow-ro | --deny | --hide | --settings | --status-json | --network-log)
        COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    --keep-env) COMPREPLY=($(compgen -e -- "$cur")); return 0 ;;
    esac
    if [[ $cur == -* ]]; then
        local opts
        opts=$("$cmd" help run 2>/dev/null | sed -n 's/^  \(--[a-z-]*\).*/\1/p')
        COMPREPLY=($(compgen -W "$opts $2 --" -- "$cur"))
        return 0
    fi
    return 1
}

_cordon_workspaces()
{
    local root="" i
    for ((i = 2; i < ${#words[@]} - 1; i++)); do
        [ "${words[i]}" = --root ] && root=${words[i + 1]}
    done
    "${words[0]}" workspace list ${root:+--root "$root"} 2>/dev/null | cut -f1
}

_cordon_sessions()
{
    "${words[0]}" session list --json 2>/dev/null | sed -n 's/.*"name": *"\([^"]*\)".*/\1/p'
}

_cordon()
{
    local cur prev words cword
    _init_completion 2>/dev/null || {
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    }
    if [ "$cword" -eq 1 ]; then
        COMPREPLY=($(compgen -W "run explain check workspace session bwrap help --help --version" -- "$cur"))
        return
    fi
    local sub=${words[1]} i
    # after `--` (or the first word that is not an option) comes the command
    for ((i = 2; i < cword; i++)); do
        if [ "${words[i]}" = "--" ]; then
            COMPREPLY=($(compgen -c -- "$cur"))
            return
        fi
    done
    case $sub in
    run | explain)
        _cordon_run_options "${words[0]}" || COMPREPLY=($(compgen -c -- "$cur"))
        ;;
    workspace)
        local ws=${words[2]}
        if [ "$cword" -eq 2 ]; then
            COMPREPLY=($(compgen -W "create run diff integrate list status restore remove" -- "$cur"))
            return
        fi
        case $prev in
        --backend) COMPREPLY=($(compgen -W "auto kernel fuse copy worktree none" -- "$cur")); return ;;
        -m | --message) return ;;
        esac
        if [ "$cword" -eq 3 ] && [[ $cur != -* ]] && [ "$ws" != create ] && [ "$ws" != list ]; then
            COMPREPLY=($(compgen -W "$(_cordon_workspaces)" -- "$cur"))
            return
        fi
        case $ws in
        run) _cordon_run_options "${words[0]}" --root || COMPREPLY=($(compgen -c -- "$cur")) ;;
        create)
            case $prev in
            --source | --root) COMPREPLY=($(compgen -d -- "$cur")) ;;
            --settings) COMPREPLY=($(compgen -f -- "$cur")) ;;
            *) COMPREPLY=($(compgen -W "--source --backend --settings --root" -- "$cur")) ;;
            esac ;;
        diff) COMPREPLY=($(compgen -W "--name-status --root" -- "$cur")) ;;
        integrate) COMPREPLY=($(compgen -W "-m --message --force --root" -- "$cur")) ;;
        *) [ "$prev" = --root ] && COMPREPLY=($(compgen -d -- "$cur")) || COMPREPLY=($(compgen -W "--root" -- "$cur")) ;;
        esac
        ;;
    session)
        local ss=${words[2]}
        if [ "$cword" -eq 2 ]; then
            COMPREPLY=($(compgen -W "start exec list stop" -- "$cur"))
            return
        fi
        if [ "$cword" -eq 3 ] && [[ $cur != -* ]] && { [ "$ss" = exec ] || [ "$ss" = stop ]; }; then
            COMPREPLY=($(compgen -W "$(_cordon_sessions)" -- "$cur"))
            return
        fi
        case $ss in
        start) [ "$cword" -gt 3 ] && { _cordon_run_options "${words[0]}" --idle-timeout || :; } ;;
        exec)
            case $prev in
            --chdir) COMPREPLY=($(compgen -d -- "$cur")) ;;
            --env | --timeout) ;;
            *) if [[ $cur == -* ]]; then
                   COMPREPLY=($(compgen -W "--chdir --env --timeout --tty --no-tty --keep --detach --" -- "$cur"))
               else
                   COMPREPLY=($(compgen -c -- "$cur"))
               fi ;;
            esac ;;
        list) COMPREPLY=($(compgen -W "--json" -- "$cur")) ;;
        esac
        ;;
    check) COMPREPLY=($(compgen -W "--json" -- "$cur")) ;;
    help) COMPREPLY=($(compgen -W "run explain check workspace session bwrap" -- "$cur")) ;;
    esac
}
complete -F _cordon cordon
