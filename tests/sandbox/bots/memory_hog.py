"""Takes 1.5 GB, 50 MB at a time (every page touched), at its first decision."""

from attack import main, report


def hog() -> None:
    held = []
    for i in range(30):
        held.append(bytearray(50 * 2**20))
        report("memory", mb=(i + 1) * 50)


main(hog)
