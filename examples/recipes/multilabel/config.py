"""Reads the recipe's flat YAML config: with PyYAML when it is installed, else with a parser of `key: value` lines.

Values are converted as YAML does for the scalars used here: true/false, integers, floats, otherwise strings.
"""


def scalar(text):
    """'true' -> True, '10' -> 10, '0.01' -> 0.01, anything else -> the text itself."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def parse_flat_yaml(text):
    """{key: value} from `key: value  # comment` lines; blank and comment lines are skipped."""
    config = {}
    for number, line in enumerate(text.splitlines(), 1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        key, separator, value = content.partition(":")
        if not separator or not key.strip():
            raise ValueError(f"config line {number}: expected `key: value`, got {line!r}")
        config[key.strip()] = scalar(value.strip())
    return config


def load_config(path):
    with open(path, encoding="utf-8") as stream:
        text = stream.read()
    try:
        import yaml
    except ImportError:
        return parse_flat_yaml(text)
    return yaml.safe_load(text)


def apply_overrides(config, assignments):
    """A copy of config with each `key=value` applied; an unknown key is an error."""
    updated = dict(config)
    for assignment in assignments:
        key, separator, value = assignment.partition("=")
        if not separator or key not in config:
            raise ValueError(f"--set {assignment!r}: expected key=value with a key of the config ({', '.join(config)})")
        updated[key] = scalar(value)
    return updated
