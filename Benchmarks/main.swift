print("quire-bench")
