pub struct Config;
