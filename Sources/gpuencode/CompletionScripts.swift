import ArgumentParser
import GPUEncodeKit

/// The shell completion scripts: argument-parser's, taught one thing it does not know. Its scripts
/// complete a default subcommand's words only after its name, but `gpuencode IN OUT --preset sepia`
/// never names `transcode`. Each shell gets a small wrapper that reads a line whose first word
/// names no command as `gpuencode transcode ...`, and offers files and the commands for the first
/// word. `CompletionScriptTests` checks every script with the shell itself.
enum CompletionScripts {
    static func script(for shell: CompletionShell) throws -> String {
        let generated = GPUEncode.completionScript(for: shell)
        let commands = GPUEncode.configuration.subcommands.map { $0._commandName } + ["help"]
        switch shell {
        case .bash: return try patch(generated, shell: "bash", [
            ("\n_gpuencode() {\n", "\n__gpuencode_tree() {\n"),
            ("\ncomplete -o filenames -F _gpuencode gpuencode", "\n" + bashWrapper(commands) + "\ncomplete -o filenames -F _gpuencode gpuencode"),
        ])
        case .zsh: return try patch(generated, shell: "zsh", [
            ("\n_gpuencode() {\n", "\n__gpuencode_tree() {\n"),
            ("\nif [[ \"${funcstack[1]}\" = _gpuencode ]]; then\n", "\n" + zshWrapper(commands) + "\nif [[ \"${funcstack[1]}\" = _gpuencode ]]; then\n"),
        ])
        case .fish: return try patch(generated, shell: "fish", [
            ("        __gpuencode_parse_subcommand 0 'version' 'h/help'\n        switch $unparsed_tokens[1]\n",
             "        __gpuencode_parse_subcommand 0 'version' 'h/help'\n" + fishDefault(commands) + "        switch $unparsed_tokens[1]\n"),
        ]) + "\ncomplete -c 'gpuencode' -n '__gpuencode_should_offer_completions_for_positional \"gpuencode\" -eq 1' -F\n"
        default: return generated
        }
    }

    /// Each anchor must be found exactly once: a changed argument-parser fails here (and in the
    /// tests), not with a script that silently stops completing.
    private static func patch(_ text: String, shell: String, _ edits: [(String, String)]) throws -> String {
        var result = text
        for (anchor, replacement) in edits {
            guard result.ranges(of: anchor).count == 1 else {
                throw GPUEncodeError(.internal, "the \(shell) completion script from argument-parser has changed shape; cannot add the default command")
            }
            result = result.replacing(anchor, with: replacement)
        }
        return result
    }

    private static func bashWrapper(_ commands: [String]) -> String {
        """
        # `gpuencode IN OUT ...` is `gpuencode transcode IN OUT ...`: a line whose first word names no
        # command is completed as the transcode's; the first word itself as a command, a file or an option.
        _gpuencode() {
            local -ar __gpuencode_commands=(\(commands.joined(separator: " ")) -h --help --version)
            if (( COMP_CWORD >= 2 )) && [[ " ${__gpuencode_commands[*]} " != *" ${COMP_WORDS[1]} "* ]]; then
                __gpuencode_as_transcode "$@"
                return
            fi
            __gpuencode_tree "$@"
            if (( COMP_CWORD == 1 )); then
                local -a __gpuencode_found=("${COMPREPLY[@]}")
                __gpuencode_as_transcode "$@"
                COMPREPLY=("${__gpuencode_found[@]}" "${COMPREPLY[@]}")
            fi
        }

        __gpuencode_as_transcode() {
            local -a COMP_WORDS=("${COMP_WORDS[0]}" transcode "${COMP_WORDS[@]:1}")
            local COMP_CWORD=$((COMP_CWORD + 1))
            local COMP_LINE="${COMP_LINE/"${COMP_WORDS[0]}"/"${COMP_WORDS[0]} transcode"}"
            local COMP_POINT=$((COMP_POINT + 10))
            COMPREPLY=()
            __gpuencode_tree "$@"
        }

        """
    }

    private static func zshWrapper(_ commands: [String]) -> String {
        """
        # `gpuencode IN OUT ...` is `gpuencode transcode IN OUT ...`: a line whose first word names no
        # command is completed as the transcode's; the first word itself as a command, a file or an option.
        _gpuencode() {
            local -ar gpuencode_commands=(\(commands.joined(separator: " ")) -h --help --version)
            local -i ret=1
            if (( CURRENT > 2 )) && (( ! ${gpuencode_commands[(Ie)${words[2]}]} )); then
                words=("${words[1]}" transcode "${(@)words[2,-1]}")
                (( CURRENT++ ))
                __gpuencode_tree "$@"
                return
            fi
            __gpuencode_tree "$@" && ret=0
            if (( CURRENT == 2 )); then
                words=("${words[1]}" transcode "${(@)words[2,-1]}")
                (( CURRENT++ ))
                __gpuencode_tree "$@" && ret=0
            fi
            return ret
        }

        """
    }

    private static func fishDefault(_ commands: [String]) -> String {
        """
                # `gpuencode IN OUT ...` is `gpuencode transcode IN OUT ...`
                if set -q unparsed_tokens[1]; and not contains -- $unparsed_tokens[1] \(commands.joined(separator: " "))
                    set unparsed_tokens transcode $unparsed_tokens
                end

        """
    }
}
