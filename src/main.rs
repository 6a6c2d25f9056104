fn main() {
    println!("reel");
}
