fn main() -> std::process::ExitCode {
    ulpgate::cli::main()
}
